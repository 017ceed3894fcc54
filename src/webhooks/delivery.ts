import { createHash } from 'node:crypto';
import * as z from 'zod';

/** A delivery as the runner settles it, from a body whose signature already held. */
export type Delivery = ReturnType<typeof deliveryOf>;

/** On `job.failed`. `retryable` and `refunded` are not in the service's documented payload: undefined when absent. */
type Failure = Partial<
  Record<'errorCode' | 'errorMessage' | 'errorReason', string> & Record<'retryable' | 'refunded', boolean>
>;

const ID = z.string().min(1).max(200);
/** A field the body may leave out or send as null: undefined either way. */
const absent = <T extends z.ZodType>(schema: T) => schema.nullish().transform((value) => value ?? undefined);
const TEXT = absent(z.string().max(2000));

// Only the fields the runner reads are checked; the rest of a body passes unread.
const BODY = z.object({
  event: z.string().min(1).max(100),
  delivery_id: ID.optional(),
  data: z.object({
    job_request_id: ID,
    result_url: absent(z.string().max(8192)),
    error_code: TEXT,
    error_message: TEXT,
    error_reason: TEXT,
    retryable: absent(z.boolean()),
    refunded: absent(z.boolean()),
  }),
});

/**
 * What a signed body says, or why it is not taken: 400 when it is not a delivery, 401 when an
 * unsigned header (`headers`: the ones that name what the signed body also says) contradicts it: it
 * was changed on the way. The text names no value from the body.
 */
export function readDelivery(
  rawBody: Buffer,
  headers: { deliveryId: string | undefined; event: string | undefined },
): Delivery | { status: 400 | 401; problem: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return { status: 400, problem: 'the body is not JSON' };
  }
  const body = BODY.safeParse(parsed);
  if (!body.success) {
    const fields = [...new Set(body.error.issues.map((issue) => issue.path.join('.') || '(body)'))].join(', ');
    return { status: 400, problem: `the body is not a delivery (${fields})` };
  }
  const { event, delivery_id: signedId } = body.data;
  if (signedId !== undefined && headers.deliveryId !== undefined && headers.deliveryId !== signedId) {
    return { status: 401, problem: 'X-DeAPI-Delivery-Id differs from the signed delivery_id' };
  }
  if (headers.event !== undefined && headers.event !== event) {
    return { status: 401, problem: 'X-DeAPI-Event differs from the signed event' };
  }
  return deliveryOf(rawBody, body.data);
}

function deliveryOf(rawBody: Buffer, { data, event, delivery_id: signedId }: z.output<typeof BODY>) {
  const { error_code: errorCode, error_message: errorMessage, error_reason: errorReason, retryable, refunded } = data;
  const failure: Failure | undefined =
    event === 'job.failed' ? { errorCode, errorMessage, errorReason, retryable, refunded } : undefined;
  return {
    /**
     * What makes the delivery once only: the body's `delivery_id`, else `body:<sha256 of the body>`.
     * Both are covered by the signature; the `X-DeAPI-Delivery-Id` header is not, so it is never the key.
     * A body without an id is keyed by its own bytes: the service's retry of it is the same body
     * (freshly signed), while a replay under another header id must not count as new.
     */
    deliveryId: signedId ?? `body:${createHash('sha256').update(rawBody).digest('hex')}`,
    event,
    jobRequestId: data.job_request_id,
    resultUrl: data.result_url,
    failure,
  };
}
