/** IMO numbers (Resolution A.1117(30)): seven digits, the last the final digit of the others weighted 7 down to 2. */
export function imoCheckDigit(firstSix: string): number {
  if (!/^\d{6}$/.test(firstSix)) throw new Error(`not six digits: ${firstSix}`);
  let sum = 0;
  for (let i = 0; i < 6; i += 1) sum += Number(firstSix[i]) * (7 - i);
  return sum % 10;
}

export function isValidImo(imo: string): boolean {
  return /^\d{7}$/.test(imo) && imoCheckDigit(imo.slice(0, 6)) === Number(imo[6]);
}

/** `9074729`, `IMO 9074729` or `IMO9074729` → `9074729`; undefined when not a valid IMO number. */
export function normaliseImo(input: string): string | undefined {
  const digits = /^(?:IMO\s?)?(\d{7})$/i.exec(input.trim())?.[1];
  return digits !== undefined && isValidImo(digits) ? digits : undefined;
}
