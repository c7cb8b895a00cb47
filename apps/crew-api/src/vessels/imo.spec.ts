import { imoCheckDigit, isValidImo, normaliseImo } from './imo';

describe('IMO numbers', () => {
  it('computes the check digit (weights 7..2, last digit of the sum)', () => {
    expect(imoCheckDigit('907472')).toBe(9);
    expect(imoCheckDigit('932148')).toBe(3);
  });

  it.each(['9074729', '9321483', '9176187'])('accepts %s', (imo) => {
    expect(isValidImo(imo)).toBe(true);
  });

  it.each(['9074728', '907472', '90747290', 'abcdefg', ''])('refuses %p', (imo) => {
    expect(isValidImo(imo)).toBe(false);
  });

  it('normalises the written forms', () => {
    expect(normaliseImo('IMO 9074729')).toBe('9074729');
    expect(normaliseImo('imo9074729')).toBe('9074729');
    expect(normaliseImo(' 9074729 ')).toBe('9074729');
    expect(normaliseImo('IMO 9074728')).toBeUndefined();
  });
});
