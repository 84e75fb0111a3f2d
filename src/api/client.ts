// The Chatbot Service client: one typed function per endpoint. Every call checks its request with the
// shared schema (a bad request is a ValidationError and is never sent), waits for the rate limiter,
// sends with the operation's auth header, checks the envelope, parses Data, and retries what a retry
// can help (see retry.ts). `onCall` hears about every HTTP attempt. The connection, the retry loop
// and the request check are connection.ts's; the streamed answer is ask-stream.ts's.
import type { z } from 'zod';
import type { BoundedResponse } from '../net/request.js';
import { rawResponse, readEnvelope } from './envelope.js';
import { postJson } from './http.js';
import {
  AskAnswer,
  AskRequest,
  CreateListingData,
  DeleteData,
  DeleteRequest,
  EditSettingsData,
  EditSettingsRequest,
  ENDPOINTS,
  ListData,
  ListingCreate,
  ListingUpdate,
  ListRequest,
  quickCreateData,
  quickListData,
  quickUpdateData,
  UpdateListingData,
  type EndpointName,
} from './schemas.js';
import type { ApiClientOptions, CallOptions, ChatbotApi, ListPageDecoder } from './types.js';
import { quickAccept, quickAcceptUpdate } from '../listing/validate.js';
import { askStream } from './ask-stream.js';
import {
  connect,
  endpointUrl,
  headers,
  readBody,
  readText,
  validate,
  withRetry,
  type Connection,
} from './connection.js';

export function createApiClient(opts: ApiClientOptions): ChatbotApi {
  const c = connect(opts);
  return {
    editSettings: (req, call) => post(c, 'edit', EditSettingsRequest, req, EditSettingsData, call),
    ask: (req, call) => post(c, 'ask', AskRequest, { ...req, stream: false }, AskAnswer, call),
    askStream: (req, call) => askStream(c, req, call),
    // a listing the mapping validated passes the quick check: one zod parse per listing at most
    createListing: (listing, call) =>
      post(c, 'create', ListingCreate, listing, CreateListingData, call, {
        request: quickAccept,
        data: quickCreateData,
      }),
    updateListing: (listing, call) =>
      post(c, 'update', ListingUpdate, listing, UpdateListingData, call, {
        request: quickAcceptUpdate,
        data: quickUpdateData,
      }),
    // a page that plainly is one is not copied item by item by zod
    listListings: (req, call) => post(c, 'list', ListRequest, req, ListData, call, { data: quickListData }),
    listListingsAs: (req, decoder, call) => listListingsAs(c, req, decoder, call),
    deleteListings: (req, call) => post(c, 'delete', DeleteRequest, req, DeleteData, call),
  };
}

/** `fast`: hand-written checks that agree with the request schema and with `data` (tried first; zod decides the rest) */
async function post<T, S extends z.ZodType>(
  c: Connection,
  endpoint: EndpointName,
  schema: S,
  req: unknown,
  data: z.ZodType<T>,
  call?: CallOptions,
  fast: { request?: (req: unknown) => z.output<S> | undefined; data?: (data: unknown) => T | undefined } = {},
): Promise<T> {
  return send(c, endpoint, validate(endpoint, schema, req, fast.request), call, async (res) => {
    const text = await readText(c, endpoint, res, call?.signal);
    return readEnvelope(ENDPOINTS[endpoint], rawResponse(res, text), data, fast.data);
  });
}

/** POSTs a checked body; each attempt's response is read (and checked) by `read`, retried as a whole. */
function send<T>(
  c: Connection,
  endpoint: EndpointName,
  body: unknown,
  call: CallOptions | undefined,
  read: (res: BoundedResponse) => Promise<T>,
): Promise<T> {
  const url = endpointUrl(c, endpoint);
  return withRetry(c, endpoint, call, async () => {
    // (every endpoint but the streamed answer reads its body whole: ask-stream.ts streams it)
    const res = await postJson(
      ENDPOINTS[endpoint],
      url,
      headers(c, endpoint, 'application/json'),
      body,
      c.transport,
      call?.signal,
      true,
    );
    return { value: await read(res), httpStatus: res.status };
  });
}

/** listListings with the caller's decoder: its `raw` first (a plainly good page), else the checks of listListings, then its `data`. */
async function listListingsAs<T>(
  c: Connection,
  req: ListRequest,
  decoder: ListPageDecoder<T>,
  call?: CallOptions,
): Promise<T> {
  const got = await send(
    c,
    'list',
    validate('list', ListRequest, req),
    call,
    async (res): Promise<{ page: T } | { data: ListData }> => {
      const bytes = await readBody(c, 'list', res, call?.signal);
      const page = await decoder.raw({ status: res.status, bytes });
      if (page !== undefined) return { page };
      const text = bytes.toString('utf8');
      return { data: readEnvelope(ENDPOINTS.list, rawResponse(res, text), ListData, quickListData) };
    },
  );
  // outside the attempt: a failure of the caller's own decoding is not a call to retry
  return 'page' in got ? got.page : decoder.data(got.data);
}
