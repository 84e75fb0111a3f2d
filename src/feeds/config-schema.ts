// The `source` of a feed in config: where the feed comes from and how to read it.
import { z } from 'zod';
import { applyVendorDefaults, checkVendorRules } from './vendors/apply.js';
import { VENDOR_NAMES } from './vendors/profile.js';
import { vendorProfile } from './vendors/registry.js';
import { SourceLimits } from './source-limits.js';
import { isRelatedResource, relatedNames } from './reso/related-names.js';

export { SourceLimits } from './source-limits.js';

const location = {
  /** a local file, relative to the config file's folder */
  path: z.string().min(1).optional().describe('local file, relative to the config file'),
  url: z.string().url().optional().describe('http(s) URL of the feed'),
  /** extra request headers (values may use ${ENV}); for http(s) and reso */
  headers: z.record(z.string(), z.string()).default({}),
  bearerToken: z.string().optional().describe('sent as Authorization: Bearer <token>'),
  /** headers of photo downloads (media.mirror), sent only over https to the hosts mediaHosts names */
  mediaHeaders: z
    .record(z.string(), z.string())
    .optional()
    .describe(
      'headers of photo downloads (media.mirror), sent only over https to mediaHosts; values may use ${ENV}, masked in every output',
    ),
  mediaHosts: z
    .array(
      z
        .string()
        .regex(
          /^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/,
          'a host name, e.g. photos.example.com',
        ),
    )
    .optional()
    .describe(
      "the photo hosts mediaHeaders (and the vendor's media token) are sent to, over https only; beside the vendor profile's own",
    ),
  // bounded: Node's timers make anything above 2^31-1 ms a 1 ms timeout
  timeoutMs: z
    .number()
    .int()
    .min(1)
    .max(3_600_000)
    .default(600_000)
    .describe('total deadline of one request: the response and its whole body (not an idle timeout)'),
  maxBytes: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('most bytes a feed (or one RESO page) may have, after gunzip (default 4 GiB)'),
  maxCompressionRatio: z
    .number()
    .positive()
    .optional()
    .describe('a gzip feed expanding more than this many times is refused as a bomb (default 200)'),
  retries: z.number().int().min(0).max(20).default(3),
  /** gzip: by Content-Encoding/Content-Type header or a .gz name unless forced */
  gzip: z.boolean().optional(),
  /** the source credential's request budget, shared by every feed and process using it */
  limits: SourceLimits.optional(),
};

export const CsvSource = z.strictObject({
  kind: z.literal('csv'),
  ...location,
  delimiter: z.string().min(1).default(','),
  quote: z.string().length(1).default('"'),
  encoding: z.enum(['utf8', 'latin1', 'windows-1252']).default('utf8'),
  // a quote never closed, or a header of a million columns, would otherwise be held whole
  maxRecordBytes: z
    .number()
    .int()
    .min(1024)
    .default(1 << 20)
    .describe('most bytes of one row (a quote never closed ends the read here)'),
  maxColumns: z.number().int().min(1).default(10_000).describe('most columns of a row'),
});

const XmlSource = z.strictObject({
  kind: z.literal('xml'),
  ...location,
  /** dotted path of the repeating record element, e.g. Listings.Listing */
  recordPath: z.string().min(1).default('Listings.Listing'),
  /** overrides the encoding the document declares in <?xml ... encoding="..."?> */
  encoding: z.string().min(1).optional(),
});

/** MITS 4.x ILS XML (apartment communities): one record per unit, or per floorplan (docs/configuration.md, "Rentals"). */
export const MitsSource = z.strictObject({
  kind: z.literal('mits'),
  ...location,
  recordPer: z
    .enum(['unit', 'floorplan'])
    .default('unit')
    .describe(
      'unit: a record per ILS_Unit, with its property and floorplan; floorplan: a record per Floorplan, with its property and the count of its available units',
    ),
  recordPath: z.string().min(1).default('PhysicalProperty.Property').describe('dotted path of the property element'),
  encoding: z.string().min(1).optional(),
  maxPropertyChars: z
    .number()
    .int()
    .min(1024)
    .max(512 * 1024 ** 2)
    .default(16 * 1024 ** 2)
    .describe(
      'most characters of one <Property>, its floorplans and units included; a larger one fails the read, naming its line',
    ),
});

/** OAuth2 client credentials (Trestle / CoreLogic): a token from `tokenUrl`, cached until shortly before it expires. */
export const OAuth2Auth = z.strictObject({
  kind: z.literal('oauth2'),
  tokenUrl: z.string().url().describe('the token endpoint (POST, grant_type=client_credentials)'),
  clientId: z.string().min(1),
  clientSecret: z.string().min(1).describe('use ${ENV}; masked in every output'),
  scope: z.string().min(1).optional().describe('e.g. "api"'),
});
export type OAuth2Auth = z.infer<typeof OAuth2Auth>;

export const ResoSource = z
  .strictObject({
    kind: z.literal('reso'),
    vendor: z
      .enum(VENDOR_NAMES)
      .default('reso')
      .describe(
        "mlsgrid | trestle | bridge | spark: the vendor's documented rules and defaults (docs/vendors.md); reso: the standard",
      ),
    originatingSystem: z
      .string()
      .min(1)
      .optional()
      .describe(
        "MLS Grid: the MLS's OriginatingSystemName (e.g. actris), put in every $filter; required with vendor: mlsgrid",
      ),
    ...location,
    auth: OAuth2Auth.optional().describe('OAuth2 client credentials; a long-lived token goes in bearerToken instead'),
    resource: z.string().default('Property'),
    top: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('most records one pull reads, in total (a pull it cuts short is never complete)'),
    maxPageSize: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('records per page asked with Prefer: odata.maxpagesize (the server may send fewer)'),
    filter: z.string().optional(),
    select: z.array(z.string()).optional(),
    expandMedia: z.boolean().default(true),
    expandOpenHouse: z
      .boolean()
      .default(false)
      .describe(
        '$expand=OpenHouse (Trestle and RESO servers that offer it): the upcoming open houses give Tours OpenHouse and an ExtensionColumn entry OpenHouses',
      ),
    related: z
      .array(
        z.string().refine(isRelatedResource, {
          error: (issue) =>
            `${String(issue.input)} is not a related resource feedsync replicates: give ${relatedNames().join(', ')}`,
        }),
      )
      .default([])
      .describe(
        "related RESO resources replicated beside Property, each incrementally by ModificationTimestamp under the vendor's rules, in the source's budget, kept in the state store. Member and Office: a listing's agent and office contact comes from the current Member/Office record named by ListAgentKey, CoListAgentKey, ListOfficeKey, CoListOfficeKey (else from the Property's own fields), and a changed one re-reads the listings that name it. OpenHouse (servers without $expand=OpenHouse: MLS Grid, Bridge, Spark): joined by ListingKey, the upcoming open houses give Tours OpenHouse and an ExtensionColumn entry OpenHouses",
      ),
    timeZone: z
      .string()
      .refine((tz) => isTimeZone(tz), { message: 'must be an IANA time zone name, e.g. America/Chicago' })
      .default('UTC')
      .describe("the MLS's IANA time zone: open house dates and times are written in it"),
    /** pull only records modified since the last successful run (high-water mark kept per feed) */
    incremental: z.boolean().default(false),
    keyField: z.string().default('ListingKey'),
    changes: z
      .enum(['auto', 'timestamps', 'entityEvent'])
      .default('auto')
      .describe(
        "incremental feeds: how changes are found. timestamps: ModificationTimestamp from the mark; entityEvent: the server's EntityEvent log (RESO RCP-027) from the sequence stored, each changed record fetched by key; auto: entityEvent where the server's $metadata offers the EntityEvent entity set (asked at each full pull), else timestamps",
      ),
    photosTimestampField: z
      .string()
      .min(1)
      .nullable()
      .default('PhotosChangeTimestamp')
      .describe(
        'incremental pulls also take records whose photos changed since the mark, where the server has this field; null: never',
      ),
    paging: z
      .enum(['keyset', 'nextLink'])
      .optional()
      .describe(
        "keyset: each page asks for the records after the last one read (by key in full pulls), so a change during the pull cannot shift a record out; nextLink: follow the server's @odata.nextLink. Unset: keyset, until an incremental pull finds the server ignores $orderby (then nextLink, re-proved at each full pull); set, it is kept whatever was found",
      ),
    maxPages: z
      .number()
      .int()
      .positive()
      .default(10_000)
      .describe('most pages one pull reads; past it the read is incomplete'),
    maxPageRecords: z
      .number()
      .int()
      .positive()
      .default(10_000)
      .describe('most records one page may hold; a larger page is an error'),
    maxPageBytes: z
      .number()
      .int()
      .positive()
      .default(256 * 1024 ** 2)
      .describe('most bytes one page may hold'),
    maxMetadataBytes: z
      .number()
      .int()
      .positive()
      .default(16 * 1024 ** 2)
      .describe(
        "most bytes of the server's $metadata (OData CSDL, read by every full pull, push, EntityEvent poll, confirmation, `feed drift` and `feed probe`); a larger one is refused, naming its URL. A whole Data Dictionary's is a few MB",
      ),
  })
  .refine((s) => !(s.auth && s.bearerToken), {
    message: 'give either auth (OAuth2) or bearerToken, not both',
    path: ['auth'],
  })
  .refine((s) => !(s.expandOpenHouse && s.related.includes('OpenHouse')), {
    message:
      'give either expandOpenHouse (the server expands OpenHouse into Property) or related: [OpenHouse] (the OpenHouse resource replicated apart), not both',
    path: ['related'],
  });

export type CsvSource = z.infer<typeof CsvSource>;
export type XmlSource = z.infer<typeof XmlSource>;
export type ResoSource = z.infer<typeof ResoSource>;
export type MitsSource = z.infer<typeof MitsSource>;

export const FeedSource = z
  .preprocess(applyVendorDefaults, z.discriminatedUnion('kind', [CsvSource, XmlSource, MitsSource, ResoSource]))
  .refine((s) => Boolean(s.path) !== Boolean(s.url), { message: 'give exactly one of path or url' })
  .superRefine((s, ctx) => {
    if (
      s.mediaHeaders &&
      Object.keys(s.mediaHeaders).length > 0 &&
      !s.mediaHosts?.length &&
      !(s.kind === 'reso' && vendorProfile(s.vendor).mediaHosts?.length)
    )
      ctx.addIssue({
        code: 'custom',
        path: ['mediaHosts'],
        message:
          'is required with mediaHeaders: the photo hosts these headers may be sent to (over https only), e.g. mediaHosts: [photos.example.com]',
      });
    if (s.kind !== 'reso') return;
    for (const issue of checkVendorRules(s)) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  });
export type FeedSource = z.infer<typeof FeedSource>;

/** Whether Intl knows this IANA time zone name. */
function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false; // (Intl refuses a zone it does not know: that is the answer)
  }
}
