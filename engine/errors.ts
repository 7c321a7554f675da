/**
 * The one error class of the engine. Every failure carries a stable string `code`; the native
 * core raises this class too (it is handed to the addon at load), and the HTTP layer maps codes to
 * statuses through one table.
 */
export class SableError extends Error {
  readonly code: string;

  constructor(message: string, code = 'internal') {
    super(message);
    this.name = 'SableError';
    this.code = code;
  }
}

export function invalid(message: string): SableError {
  return new SableError(message, 'invalid_argument');
}
