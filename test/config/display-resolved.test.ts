// A feed's display rules are resolved once, in the config's parse (FeedConfig.displayRules, issue 52
// point 5); a feed parsed before parses again to the same feed (the bench and the CLI re-parse one
// with a change), its rules derived anew from its display config, not taken from the input.
import { describe, expect, it } from 'vitest';
import { FeedConfig } from '../../src/config/schema.js';
import { resolveDisplay } from '../../src/mapping/display-config.js';

const raw = {
  name: 'homes',
  chatbot: 'SN-1',
  source: { kind: 'reso', url: 'https://mls.example/odata', resource: 'Property' },
  mapping: { preset: 'reso' },
};

describe('display rules resolved in the parse', () => {
  it('a parsed feed carries the rules resolveDisplay gives for its display config', () => {
    const feed = FeedConfig.parse(raw);
    expect(feed.displayRules).toEqual(resolveDisplay(undefined, 'reso'));
    expect(feed.displayRules.purpose).toBe('idx');
  });

  it('a parsed feed parses again, its rules derived anew from its display config', () => {
    const once = FeedConfig.parse(raw);
    const again = FeedConfig.parse({ ...once, display: { purpose: 'internal' } });
    expect(again.displayRules).toEqual(resolveDisplay({ purpose: 'internal' }, 'reso'));
    expect(FeedConfig.parse(once)).toEqual(once);
  });
});
