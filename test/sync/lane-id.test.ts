import fc from 'fast-check';
import { describe, it } from 'vitest';
import { feedOfLane, laneId } from '../../src/sync/model/lane.js';

// the feed name's rule in config/schema.ts
const feedName = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]*$/);

describe('lane ids', () => {
  it("a routed lane's id gives back its feed, whatever the chatbot's serial number", () => {
    fc.assert(fc.property(feedName, fc.string(), (feed, chatbot) => feedOfLane(laneId(feed, chatbot)) === feed));
  });

  it("a feed's one lane is named after the feed", () => {
    fc.assert(fc.property(feedName, (feed) => feedOfLane(feed) === feed));
  });
});
