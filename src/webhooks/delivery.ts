import * as z from 'zod';

/** The events the service sends; any other name is verified, recorded and otherwise ignored. */
export const WEBHOOK_EVENTS = ['job.processing', 'job.completed', 'job.failed'] as const;

/** A delivery as the runner settles it, from a body whose signature already held. */
export interface Delivery {
  /** The body's `delivery_id` (it is signed; the header is not), else the header's. */
  deliveryId: string;
  event: string;
  jobRequestId: string;
  resultUrl?: string | undefined;
  /** On `job.failed`. `retryable` and `refunded` are not in the service's documented payload: undefined when absent. */
  failure?: {
    errorCode?: string | undefined;
    errorMessage?: string | undefined;
    errorReason?: string | undefined;
    retryable?: boolean | undefined;
    refunded?: boolean | undefined;
  };
}

const ID = z.string().min(1).max(200);
const TEXT = z.string().max(2000).nullish();

// Only the fields the runner reads are checked; the rest of a body passes unread.
const BODY = z.object({
  event: z.string().min(1).max(100),
  delivery_id: ID.optional(),
  data: z.object({
    job_request_id: ID,
    result_url: z.string().max(8192).nullish(),
    error_code: TEXT,
    error_message: TEXT,
    error_reason: TEXT,
    retryable: z.boolean().nullish(),
    refunded: z.boolean().nullish(),
  }),
});

/** What a body says, or why it is not a delivery (for a 400; the text names no value from the body). */
export function readDelivery(rawBody: Buffer, deliveryIdHeader: string | undefined): Delivery | { problem: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return { problem: 'the body is not JSON' };
  }
  const body = BODY.safeParse(parsed);
  if (!body.success) {
    const fields = [...new Set(body.error.issues.map((issue) => issue.path.join('.') || '(body)'))].join(', ');
    return { problem: `the body is not a delivery (${fields})` };
  }
  const deliveryId = body.data.delivery_id ?? deliveryIdHeader;
  if (deliveryId === undefined || deliveryId === '') return { problem: 'the delivery has no delivery id' };
  const { data, event } = body.data;
  return {
    deliveryId,
    event,
    jobRequestId: data.job_request_id,
    resultUrl: data.result_url ?? undefined,
    failure:
      event === 'job.failed'
        ? {
            errorCode: data.error_code ?? undefined,
            errorMessage: data.error_message ?? undefined,
            errorReason: data.error_reason ?? undefined,
            retryable: data.retryable ?? undefined,
            refunded: data.refunded ?? undefined,
          }
        : undefined,
  };
}
