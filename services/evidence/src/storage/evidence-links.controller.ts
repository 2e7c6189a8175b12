import { EventStore } from '@caseloop/ledger';
import { Controller, Get, Inject, NotFoundException, Param, Redirect } from '@nestjs/common';
import { artifactKey } from './artifact-key';
import { isShareable } from './evidence-link.policy';
import { S3ArtifactStore } from './s3-artifact.store';

/**
 * `GET /evidence/cases/:caseId/:revision/:sha256` → 302 to a presigned link that lives minutes.
 * Receipts carry this stable address, so nothing credential-like ever sits in the ledger or Discord.
 */
@Controller('evidence/cases')
export class EvidenceLinksController {
  constructor(
    @Inject(EventStore) private readonly store: EventStore,
    @Inject(S3ArtifactStore) private readonly artifacts: S3ArtifactStore,
  ) {}

  @Get(':caseId/:revision/:sha256')
  @Redirect()
  async link(
    @Param('caseId') caseId: string,
    @Param('revision') revision: string,
    @Param('sha256') sha256: string,
  ) {
    let key: string;
    try {
      key = artifactKey(caseId, revision, sha256);
    } catch {
      throw new NotFoundException();
    }
    const { events } = await this.store.load('case', caseId);
    if (!isShareable(events, key)) throw new NotFoundException();
    return { url: await this.artifacts.presignedLink(key), statusCode: 302 };
  }
}
