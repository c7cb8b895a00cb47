/** A refusal of a feature's rules: a code of its own union, never a status; each transport maps it exhaustively. */
export class DomainException<C extends string> extends Error {
  constructor(
    readonly code: C,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}
