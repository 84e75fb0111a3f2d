// The chat check looks for the listing's price in the chatbot's answer the way people write prices.
import { describe, expect, it } from 'vitest';
import { judgeAnswer, mentionsPrice } from '../../src/smoke/chat-check.js';
import type { Headline } from '../../src/sync/model/changes.js';

describe('mentionsPrice', () => {
  it.each([
    ['It is listed at $425,000.', 425_000],
    ['Price: 425000.00 USD', 425_000],
    ['asking $425K', 425_000],
    ['asking $425k, 3 beds', 425_400],
    ['about $1.2 million', 1_195_000],
    ['$1.25M', 1_250_000],
    ['rent is $2,150 a month', 2150],
    ['rent is $2,150.50 a month', 2150.5],
  ])('%s names %d', (answer, price) => expect(mentionsPrice(answer, price)).toBe(true));

  it.each([
    ['listed at $10,000', 1000],
    ['listed at $4,250,000', 425_000],
    ['about $1.3 million', 1_195_000],
    ['3 bedrooms, 2 baths, built 1995', 1995.5],
    ['no price given', 425_000],
  ])('%s does not name %d', (answer, price) => expect(mentionsPrice(answer, price)).toBe(false));

  it('an answer with the address and a rounded price is judged answerable; a wrong price is named', () => {
    const h: Headline = {
      MLSNumber: 'ATX1',
      Address: '12 Oak St',
      City: 'Austin',
      SaleType: 'for_sale',
      SalePrice: 1_195_000,
    };
    expect(judgeAnswer('12 Oak St in Austin is listed for about $1.2 million.', 'ATX1', h)).toBeUndefined();
    expect(judgeAnswer('12 Oak St in Austin is listed for $2.4 million.', 'ATX1', h)).toMatch(
      /the price 1195000 is not in the answer/,
    );
  });
});
