/**
 * A refusal of a feature's rules: a code from the feature's own union and a message, never an
 * HTTP status. Each transport's mapper turns the code into its answer (Problem Details, RFC 6749
 * error, RPC error, CLI exit code) in an exhaustive switch.
 */
export class DomainException<C extends string> extends Error {
  constructor(
    readonly code: C,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}
