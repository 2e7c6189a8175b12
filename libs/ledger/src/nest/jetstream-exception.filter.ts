import { ArgumentsHost, Catch, RpcExceptionFilter } from '@nestjs/common';
import { Observable, throwError } from 'rxjs';

/**
 * Nest's default RPC filter replaces every error with `{ status: 'error', message: 'Internal server
 * error' }`, which would hide whether a handler failed transiently or met a poison event. This filter
 * hands the original error back to the JetStream transport, which maps it once (nak / term).
 */
@Catch()
export class JetStreamExceptionFilter implements RpcExceptionFilter<unknown> {
  catch(exception: unknown, _host: ArgumentsHost): Observable<never> {
    return throwError(() => exception);
  }
}
