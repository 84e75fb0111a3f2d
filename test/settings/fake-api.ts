// A ChatbotApi in memory for unit tests: records every call, answers what the test sets.
import type { AskAnswer, AskRequest, EditSettingsRequest, StreamEvent } from '../../src/api/schemas.js';
import type { ChatbotApi } from '../../src/api/types.js';

export interface FakeApi extends ChatbotApi {
  edits: EditSettingsRequest[];
  asks: AskRequest[];
  streams: AskRequest[];
}

export function fakeApi(
  behaviour: {
    editData?: number;
    editError?: Error;
    answer?: Partial<AskAnswer>;
    askError?: Error;
    stream?: StreamEvent[];
    streamError?: Error;
  } = {},
): FakeApi {
  const api: FakeApi = {
    edits: [],
    asks: [],
    streams: [],
    async editSettings(req) {
      api.edits.push(req);
      if (behaviour.editError) throw behaviour.editError;
      return behaviour.editData ?? 1;
    },
    async ask(req) {
      api.asks.push(req);
      if (behaviour.askError) throw behaviour.askError;
      return { messageid: 1, content: 'Three homes match.', totalToken: 42, noAnswer: false, ...behaviour.answer };
    },
    async *askStream(req) {
      api.streams.push(req);
      const events: StreamEvent[] = behaviour.stream ?? [
        { type: 'fragment', content: 'Three homes ' },
        { type: 'fragment', content: 'match.' },
        { type: 'final', QuestionID: 1, AnswerID: 2, Answer: 'Three homes match.', TotalToken: 42 },
      ];
      for (const e of events) yield e;
      if (behaviour.streamError) throw behaviour.streamError;
    },
    createListing: () => Promise.reject(new Error('not used')),
    updateListing: () => Promise.reject(new Error('not used')),
    listListings: () => Promise.reject(new Error('not used')),
    deleteListings: () => Promise.reject(new Error('not used')),
  };
  return api;
}
