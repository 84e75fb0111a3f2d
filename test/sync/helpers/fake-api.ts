// An in-memory ChatbotApi for unit tests of paging and the executor: listings by ID, a page-size
// cap, and scripted failures per call (`failNext`) so lost answers and rejected batches are exact.
import type { ChatbotApi } from '../../../src/api/types.js';
import { toListItem } from '../../../src/emulator/list-item.js';
import { ApiError, TimeoutError } from '../../../src/errors.js';
import type { ListingCreate } from '../../../src/listing/schema.js';

type Op = 'create' | 'update' | 'list' | 'delete';
type Failure = 'timeout-after-write' | 'timeout' | '503' | '400' | '401' | '403';

export function createFakeApi(opts: { maxPageSize?: number } = {}) {
  const listings = new Map<number, ListingCreate & { ID: number }>();
  let nextId = 1;
  const calls: Array<{ op: Op; body: unknown }> = [];
  const script: Partial<Record<Op, Failure[]>> = {};
  let rejectKey: string | undefined;
  /** keys the service leaves in place on delete, saying so only through SuccessCount */
  const undeletable = new Set<string>();
  /** run before each list page is answered: lets a test change listings mid-paging */
  let beforeList: ((page: number) => void) | undefined;

  const fail = (op: Op, write?: () => void) => {
    const f = script[op]?.shift();
    if (!f) return;
    if (f === 'timeout-after-write') {
      write?.();
      throw new TimeoutError(op, 100);
    }
    if (f === 'timeout') throw new TimeoutError(op, 100);
    throw new ApiError(op, Number(f), Number(f), `scripted ${f}`);
  };

  const add = (l: ListingCreate) => {
    const ID = nextId++;
    listings.set(ID, { ...l, ID });
    return ID;
  };

  const api: ChatbotApi = {
    editSettings: async () => 1,
    ask: async () => ({ messageid: 1, content: '', totalToken: 0, noAnswer: true }),
    askStream: async function* () {},
    createListing: async (l) => {
      calls.push({ op: 'create', body: l });
      let id = 0;
      fail('create', () => (id = add(l)));
      return String(id || add(l));
    },
    updateListing: async (u) => {
      calls.push({ op: 'update', body: u });
      fail('update');
      const { Key, KeyType, ...l } = u;
      let n = 0;
      for (const [id, s] of listings) {
        if ((KeyType === 'URL' ? s.Url : s.MLSNumber) === Key) {
          listings.set(id, { ...l, ID: id });
          n++;
        }
      }
      return n;
    },
    listListings: async (req) => {
      calls.push({ op: 'list', body: req });
      beforeList?.(req.PageNumber ?? 1);
      fail('list');
      const size = Math.min(req.PageSize ?? 20, opts.maxPageSize ?? 100);
      const all = [...listings.values()].filter((l) => !req.MLSNumber || l.MLSNumber === req.MLSNumber);
      const page = ((req.PageNumber ?? 1) - 1) * size;
      return { List: all.slice(page, page + size).map(toListItem), VirtualCount: all.length };
    },
    deleteListings: async (req) => {
      calls.push({ op: 'delete', body: req });
      fail('delete');
      if (rejectKey && req.Keys.includes(rejectKey)) throw new ApiError('delete', 400, 400, `bad key ${rejectKey}`);
      let n = 0;
      for (const [id, s] of listings) {
        const k = req.KeyType === 'NewOaks' ? String(id) : req.KeyType === 'URL' ? s.Url : s.MLSNumber;
        if (req.Keys.includes(k) && !undeletable.has(k)) {
          listings.delete(id);
          n++;
        }
      }
      return { SuccessCount: n };
    },
  };

  return {
    api,
    listings,
    calls,
    add,
    count: (op: Op) => calls.filter((c) => c.op === op).length,
    failNext: (op: Op, ...failures: Failure[]) => (script[op] = [...(script[op] ?? []), ...failures]),
    rejectDeleteOf: (key: string) => (rejectKey = key),
    keepOnDelete: (key: string) => undeletable.add(key),
    onList: (fn: (page: number) => void) => (beforeList = fn),
  };
}
