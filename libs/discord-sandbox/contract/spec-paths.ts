/**
 * The path in Discord's OpenAPI description for one of the local Discord's route templates:
 * `/channels/:channel/messages/:message` ↔ `/channels/{channel_id}/messages/{message_id}`.
 * Same number of segments, the same literal segments, a parameter where the other has one.
 */
export function specPathFor(template: string, specPaths: readonly string[]): string | null {
  const ours = template.split('/');
  return (
    specPaths.find((p) => {
      const theirs = p.split('/');
      return (
        theirs.length === ours.length &&
        theirs.every((seg, i) => {
          const mine = ours[i] as string;
          const param = /^\{[^}]+\}$/.test(seg);
          return param ? mine.startsWith(':') : seg === mine;
        })
      );
    }) ?? null
  );
}
