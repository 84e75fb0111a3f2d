// The emulator is strict as the spec: POST + JSON only, the envelope on every answer, the auth
// header of each operation, and 400s that name the field and the rule.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENDPOINTS, type EndpointName } from '../../src/api/schemas.js';
import {
  sampleListing,
  startTestEmulator,
  TEST_SECRET_KEY,
  TEST_SESSION_KEY,
  type TestEmulator,
} from '../helpers/emulator.js';
import { rawPost } from '../helpers/raw-post.js';
import { freshFetch } from '../helpers/fresh-fetch.js';

let t: TestEmulator;
beforeAll(async () => {
  t = await startTestEmulator({ chatbots: ['SN-1', 'SN-2'] });
});
afterAll(() => t.close());

const AUTH = { authorization: TEST_SECRET_KEY };
const SESSION = { 'chatrobot-sessionkey': TEST_SESSION_KEY };

const validBodies: Record<EndpointName, unknown> = {
  edit: { serialNumber: 'SN-1' },
  ask: { sessionID: 1, content: 'hi' },
  create: sampleListing(),
  update: { ...sampleListing(), Key: 'A1', KeyType: 'MLSNumber' },
  list: { SerialNumber: 'SN-1' },
  delete: { SerialNumber: 'SN-1', Keys: ['A1'], KeyType: 'MLSNumber' },
};
const rightHeader = (name: EndpointName) => (name === 'list' ? SESSION : AUTH);

function expectEnvelope(body: unknown, code: number) {
  expect(body).toMatchObject({ Version: '1.0', Success: code === 200, Code: code });
  expect(typeof (body as { Message?: unknown }).Message).toBe('string');
  expect(body).toHaveProperty('Data');
}

describe('emulator: HTTP rules', () => {
  it.each(Object.keys(ENDPOINTS) as EndpointName[])(
    '%s: 405 for GET, 415 without JSON, 401 without or with a wrong header',
    async (name) => {
      const url = t.url + ENDPOINTS[name];
      const get = await rawPost(url, undefined, rightHeader(name), 'GET');
      expect(get.status).toBe(405);
      expect(get.headers.get('allow')).toBe('POST');
      expectEnvelope(get.body, 405);

      const text = await rawPost(url, JSON.stringify(validBodies[name]), {
        ...rightHeader(name),
        'content-type': 'text/plain',
      });
      expect(text.status).toBe(415);
      expectEnvelope(text.body, 415);

      const none = await rawPost(url, validBodies[name]);
      expect(none.status).toBe(401);
      expectEnvelope(none.body, 401);
      expect(none.body.Message).toContain(name === 'list' ? 'chatrobot-sessionkey' : 'Authorization');

      const wrong = await rawPost(
        url,
        validBodies[name],
        name === 'list' ? { 'chatrobot-sessionkey': 'nope' } : { authorization: 'nope' },
      );
      expect(wrong.status).toBe(401);
    },
  );

  it('list does not accept the Authorization header, edit and ask do not accept the session key', async () => {
    expect((await rawPost(t.url + ENDPOINTS.list, validBodies.list, AUTH)).status).toBe(401);
    expect((await rawPost(t.url + ENDPOINTS.edit, validBodies.edit, SESSION)).status).toBe(401);
    expect((await rawPost(t.url + ENDPOINTS.ask, validBodies.ask, SESSION)).status).toBe(401);
  });

  it('create, update and delete accept either header (the spec samples send chatrobot-sessionkey)', async () => {
    for (const name of ['create', 'update', 'delete'] as const) {
      const res = await rawPost(t.url + ENDPOINTS[name], validBodies[name], SESSION);
      expect(res.status, name).toBe(200);
      expectEnvelope(res.body, 200);
    }
  });

  it('answers an unknown path with a 404 envelope and a body that is not JSON with a 400', async () => {
    const missing = await rawPost(t.url + '/chat/Chatbot/Nope', {}, AUTH);
    expect(missing.status).toBe(404);
    expectEnvelope(missing.body, 404);
    const bad = await rawPost(t.url + ENDPOINTS.create, '{"SerialNumber":', AUTH);
    expect(bad.status).toBe(400);
    expect(bad.body.Message).toContain('not valid JSON');
  });

  it('accepts application/json with a charset', async () => {
    const res = await rawPost(t.url + ENDPOINTS.list, validBodies.list, {
      ...SESSION,
      'content-type': 'application/json; charset=utf-8',
    });
    expect(res.status).toBe(200);
  });

  it('knows only the chatbots it was started with', async () => {
    const res = await rawPost(t.url + ENDPOINTS.create, sampleListing({ SerialNumber: 'SN-9' }), AUTH);
    expect(res.status).toBe(404);
    expect(res.body.Message).toBe('chatbot SN-9 not found');
    const edit = await rawPost(t.url + ENDPOINTS.edit, { serialNumber: 'SN-9' }, AUTH);
    expect(edit.status).toBe(404);
    const session = await freshFetch(t.url + '/__emulator/sessions', {
      method: 'POST',
      body: JSON.stringify({ serialNumber: 'SN-9' }),
    });
    expect(session.status).toBe(404);
  });
});

describe('emulator: validation with the shared schemas', () => {
  const cases: Array<[string, EndpointName, unknown, string, string]> = [
    ['a missing required listing field', 'create', sampleListing({ MLSNumber: undefined }), 'MLSNumber', 'is required'],
    ['a number sent as a string', 'create', sampleListing({ Bedrooms: '3' }), 'Bedrooms', 'must be a number (got "3")'],
    [
      'a SaleType outside the enum',
      'create',
      sampleListing({ SaleType: 'sale' }),
      'SaleType',
      'must be one of "for_sale", "for_rent" (got "sale")',
    ],
    ['a Status outside the enum', 'create', sampleListing({ Status: 'Pending' }), 'Status', 'PreOnMarket'],
    ['an AreaUnit outside the enum', 'create', sampleListing({ AreaUnit: 'sqft' }), 'AreaUnit', 'Square Feet'],
    ['a Tours outside the enum', 'create', sampleListing({ Tours: 'Video' }), 'Tours', 'OpenHouse'],
    ['a SpaceType outside the enum', 'create', sampleListing({ SpaceType: 'Flat' }), 'SpaceType', 'Entire place'],
    [
      'an ExtensionColumn entry without value',
      'create',
      sampleListing({ ExtensionColumn: [{ Key: 'a' }] }),
      'ExtensionColumn.0.value',
      'is required',
    ],
    [
      'a field the spec does not have',
      'create',
      sampleListing({ Price: 1 }),
      'Price',
      'is not a field of this request',
    ],
    ['a KeyType outside the enum', 'update', { ...sampleListing(), Key: 'A1', KeyType: 'ID' }, 'KeyType', 'NewOaks'],
    ['an update without Key', 'update', { ...sampleListing(), KeyType: 'MLSNumber' }, 'Key', 'is required'],
    ['a list SaleType outside the enum', 'list', { SerialNumber: 'SN-1', SaleType: 'rent' }, 'SaleType', 'for_rent'],
    ['a PageSize of 0', 'list', { SerialNumber: 'SN-1', PageSize: 0 }, 'PageSize', 'must be >= 1'],
    ['a delete without Keys', 'delete', { SerialNumber: 'SN-1', KeyType: 'URL' }, 'Keys', 'is required'],
    [
      'a delete with an empty Keys',
      'delete',
      { SerialNumber: 'SN-1', Keys: [], KeyType: 'URL' },
      'Keys',
      'at least one key',
    ],
    [
      'a Temperature that is not an integer',
      'edit',
      { serialNumber: 'SN-1', Temperature: 0.5 },
      'Temperature',
      'must be an integer',
    ],
    [
      'a colour that is not rgb()',
      'edit',
      { serialNumber: 'SN-1', UserMessageColor: 'red' },
      'UserMessageColor',
      'rgb(r,g,b)',
    ],
    ['an ask without sessionID', 'ask', { content: 'hi' }, 'sessionID', 'is required'],
    ['an unknown chatAskType', 'ask', { sessionID: 1, content: 'hi', chatAskType: 'Gif' }, 'chatAskType', 'Text'],
    [
      'fileIds with Text',
      'ask',
      { sessionID: 1, content: 'hi', fileIds: [1] },
      'fileIds',
      'only when chatAskType is Image, Video or Audio',
    ],
    [
      'fileIds with chatAskType null (Text)',
      'ask',
      { sessionID: 1, content: 'hi', chatAskType: null, fileIds: [1] },
      'fileIds',
      'only when',
    ],
    [
      'two files with Audio',
      'ask',
      { sessionID: 1, content: '', chatAskType: 'Audio', fileIds: [1, 2] },
      'fileIds',
      'one file only',
    ],
    [
      'two files with Video',
      'ask',
      { sessionID: 1, content: '', chatAskType: 'Video', fileIds: [1, 2] },
      'fileIds',
      'one file only',
    ],
    ['an empty Text message', 'ask', { sessionID: 1, content: '' }, 'content', 'may be empty only'],
  ];

  it.each(cases)('400 for %s, naming the field and the rule', async (_name, endpoint, body, field, rule) => {
    const res = await rawPost(t.url + ENDPOINTS[endpoint], body, rightHeader(endpoint));
    expect(res.status).toBe(400);
    expectEnvelope(res.body, 400);
    expect(res.body.Message).toContain(field);
    expect(res.body.Message).toContain(rule);
  });

  it('reports every broken rule of a request, not only the first', async () => {
    const res = await rawPost(
      t.url + ENDPOINTS.create,
      sampleListing({ Bedrooms: -1, YearBuilt: 'old', Url: '' }),
      AUTH,
    );
    expect(res.status).toBe(400);
    for (const field of ['Bedrooms', 'YearBuilt', 'Url']) expect(res.body.Message).toContain(field);
  });
});
