import { expect } from 'chai';
import { currencyExponent, formatMinor, isCurrency, parseAmount } from '../../server/wallet/money.js';

describe('money', () => {
  it('uses the ISO 4217 exponent of the currency', () => {
    expect(currencyExponent('EUR')).to.equal(2);
    expect(currencyExponent('JPY')).to.equal(0);
    expect(currencyExponent('KWD')).to.equal(3);
    expect(currencyExponent('CLF')).to.equal(4);
  });

  it('renders minor units as a decimal string, negatives included', () => {
    expect(formatMinor(1234, 'EUR')).to.equal('12.34');
    expect(formatMinor(5, 'EUR')).to.equal('0.05');
    expect(formatMinor(0, 'EUR')).to.equal('0.00');
    expect(formatMinor(-1, 'EUR')).to.equal('-0.01');
    expect(formatMinor(-150, 'EUR')).to.equal('-1.50');
    expect(formatMinor(1234, 'JPY')).to.equal('1234');
    expect(formatMinor(-7, 'JPY')).to.equal('-7');
    expect(formatMinor(1234, 'KWD')).to.equal('1.234');
    expect(formatMinor(9007199254740991n, 'EUR')).to.equal('90071992547409.91');
  });

  it('parses amounts with at most the currency’s decimals', () => {
    expect(parseAmount('12.34', 'EUR')).to.equal(1234);
    expect(parseAmount('12.3', 'EUR')).to.equal(1230);
    expect(parseAmount('12', 'EUR')).to.equal(1200);
    expect(parseAmount('12.345', 'EUR')).to.equal(null);
    expect(parseAmount('1.5', 'JPY')).to.equal(null);
    expect(parseAmount('1.234', 'KWD')).to.equal(1234);
    expect(parseAmount('-1', 'EUR')).to.equal(null);
    expect(parseAmount('1e3', 'EUR')).to.equal(null);
    expect(parseAmount('12.', 'EUR')).to.equal(null);
    expect(parseAmount('.5', 'EUR')).to.equal(null);
    expect(parseAmount('1234567890123456', 'EUR')).to.equal(null); // 16 digits
    expect(parseAmount('123456789012345', 'JPY')).to.equal(123456789012345);
    expect(parseAmount('0.0001', 'CLF')).to.equal(1);
  });

  it('ignores spaces around an amount, as typed in a form', () => {
    expect(parseAmount(' 12.50 ', 'EUR')).to.equal(1250);
    expect(parseAmount('\t7\n', 'JPY')).to.equal(7);
    expect(parseAmount('1 2', 'EUR')).to.equal(null);
  });

  it('knows ISO currency codes', () => {
    expect(isCurrency('EUR')).to.equal(true);
    expect(isCurrency('eur')).to.equal(false);
    expect(isCurrency('XXY')).to.equal(false);
    expect(isCurrency('EURO')).to.equal(false);
    expect(isCurrency('xEUR')).to.equal(false);
    expect(isCurrency('JPY')).to.equal(true);
  });
});
