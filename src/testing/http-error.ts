/** An HTTP error the fake answers with `{ success: false, error: { code, message, details } }`. */
export class FakeHttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}
