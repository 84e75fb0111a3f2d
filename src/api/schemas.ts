// Request and response schemas of the Chatbot Service API, from the spec's tables. One definition,
// used by the client (to check what it sends and parse what it gets), the emulator (to validate
// requests) and the tests.
import { z } from 'zod';
import { KeyType, ListItem, ListingCreate, ListingUpdate, SaleType } from '../listing/schema.js';

export { ListingCreate, ListingUpdate, ListItem, KeyType };

export const ENDPOINTS = {
  edit: '/chat/Chatbot/Edit',
  ask: '/chat/Chat/ClientAsk',
  create: '/chat/Chatbot/RealEstateCreate',
  update: '/chat/Chatbot/RealEstateUpdate',
  list: '/chat/Chatbot/RealEstateList',
  delete: '/chat/Chatbot/RealEstateDelete',
} as const;
export type EndpointName = keyof typeof ENDPOINTS;

/** Which auth header each operation requires (spec, Authentication). */
export const AUTH_HEADER: Record<EndpointName, 'authorization' | 'chatrobot-sessionkey'> = {
  edit: 'authorization',
  ask: 'authorization',
  create: 'authorization',
  update: 'authorization',
  delete: 'authorization',
  list: 'chatrobot-sessionkey',
};

export const Envelope = z.object({
  Data: z.unknown(),
  Version: z.string(),
  Success: z.boolean(),
  Code: z.number().int(),
  Message: z
    .string()
    .nullable()
    .transform((m) => m ?? ''),
});
export type Envelope = z.infer<typeof Envelope>;

// ---- Edit chatbot settings -------------------------------------------------------------------

const RGB =
  /^rgb\(\s*(25[0-5]|2[0-4]\d|1?\d?\d)\s*,\s*(25[0-5]|2[0-4]\d|1?\d?\d)\s*,\s*(25[0-5]|2[0-4]\d|1?\d?\d)\s*\)$/;
const rgb = () => z.string().regex(RGB, 'must be rgb(r,g,b) with 0-255 each');

export const chatbotSettingsShape = {
  Name: z.string().optional(),
  Model: z.string().min(1, 'must not be empty').optional(),
  SystemMessage: z.string().optional(),
  Temperature: z.number().int().optional(),
  TimeZone: z.string().optional(),
  AnswerSuffix: z.string().optional(),
  ChatProfilePicture: z.string().optional(),
  ChatIcon: z.string().optional(),
  ChatBubbleAlign: z.number().int().optional(),
  ChatBubbleColor: rgb().optional(),
  ChatbotPopupOnce: z.boolean().optional(),
  ChatbotPrivacyPolicyDescription: z.string().optional(),
  ChatbotPrivacyPolicyName: z.string().optional(),
  ChatbotPrivacyPolicyUrl: z.string().optional(),
  EnablePushToTalk: z.boolean().optional(),
  EnableUploadImage: z.boolean().optional(),
  FacebookUrl: z.string().optional(),
  InstagramUrl: z.string().optional(),
  RemoveChatLogOnBrowserClose: z.boolean().optional(),
  SuggestedMessage: z.string().optional(),
  TalkToHumanEmail: z.string().optional(),
  TalkToHumanResponseMessage: z.string().optional(),
  UserInputPlaceholder: z.string().optional(),
  UserMessageColor: rgb().optional(),
  WelcomeMessage: z.string().optional(),
  WhatsappUrl: z.string().optional(),
  VerifyDomain: z.boolean().optional(),
  Domains: z.string().optional(),
  RateLimitCount: z.number().int().optional(),
  RateLimitMessage: z.string().optional(),
  RateLimitTime: z.number().int().optional(),
  CustomDomain: z.string().optional(),
  EmailForDailyChatLogs: z.string().optional(),
  EmailForDailyLeads: z.string().optional(),
  AIResponseLanguage: z.string().optional(),
  MessageLimit: z.number().int().min(-1, 'must be -1 (unlimited) or more').optional(),
} as const;

/** Settings as a user writes them in config (no serialNumber: that is the chatbot's). */
export const ChatbotSettings = z.strictObject(chatbotSettingsShape);
export type ChatbotSettings = z.infer<typeof ChatbotSettings>;

export const EditSettingsRequest = z.strictObject({
  serialNumber: z.string().min(1, 'must not be empty'),
  ...chatbotSettingsShape,
});
export type EditSettingsRequest = z.infer<typeof EditSettingsRequest>;
export const EditSettingsData = z.number().int();

// ---- Message a chatbot -------------------------------------------------------------------------

const CHAT_ASK_TYPES = ['Text', 'Audio', 'Image', 'Video'] as const;

export const AskRequest = z
  .strictObject({
    sessionID: z.number().int(),
    content: z.string(),
    chatAskType: z.enum(CHAT_ASK_TYPES).nullable().optional(),
    stream: z.boolean().optional(),
    fileIds: z.array(z.number().int()).optional(),
  })
  .superRefine((req, ctx) => {
    const type = req.chatAskType ?? 'Text';
    const files = req.fileIds ?? [];
    if (files.length > 0 && type === 'Text') {
      ctx.addIssue({
        code: 'custom',
        path: ['fileIds'],
        message: 'is valid only when chatAskType is Image, Video or Audio',
      });
    }
    if ((type === 'Audio' || type === 'Video') && files.length > 1) {
      ctx.addIssue({ code: 'custom', path: ['fileIds'], message: `allows one file only with chatAskType ${type}` });
    }
    if (type === 'Text' && req.content.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['content'],
        message: 'may be empty only when chatAskType is Image, Audio or Video',
      });
    }
  });
export type AskRequest = z.infer<typeof AskRequest>;

export const AskAnswer = z.object({
  messageid: z.number().int(),
  content: z.string(),
  totalToken: z.number().int(),
  noAnswer: z.boolean(),
});
export type AskAnswer = z.infer<typeof AskAnswer>;

export const StreamFragment = z.object({ content: z.string() });
export const StreamFinal = z.object({
  QuestionID: z.number().int(),
  AnswerID: z.number().int(),
  Answer: z.string(),
  TotalToken: z.number().int(),
});
export type StreamFinal = z.infer<typeof StreamFinal>;

/** What `askStream` yields: fragments, then exactly one final object. */
export type StreamEvent = { type: 'fragment'; content: string } | ({ type: 'final' } & StreamFinal);

// ---- Listings ----------------------------------------------------------------------------------

export const CreateListingData = z.string();
export const UpdateListingData = z.number().int();

export const ListRequest = z.strictObject({
  SerialNumber: z.string().min(1, 'must not be empty'),
  CityName: z.string().optional(),
  SaleType: SaleType.optional(),
  MLSNumber: z.string().optional(),
  PageNumber: z.number().int().min(1).optional(),
  PageSize: z.number().int().min(1).optional(),
});
export type ListRequest = z.infer<typeof ListRequest>;

export const ListData = z.object({
  List: z.array(ListItem),
  VirtualCount: z.number().int().nonnegative(),
});
export type ListData = z.infer<typeof ListData>;

/** ListItem's members in the schema's order, and whether each is a string (else a number). */
const LIST_ITEM_MEMBERS = Object.entries(ListItem.shape).map(([k, v]) => [k, v instanceof z.ZodString] as const);
const isInt = (v: unknown): v is number => Number.isSafeInteger(v);

/**
 * A create's Data (the new listing's ID) as CreateListingData.parse returns it, when it is a
 * string; anything else undefined, for zod to decide and name (every create's answer is one: no
 * zod parse a write). test/api/write-data.test.ts holds the two to the same answers.
 */
export const quickCreateData = (data: unknown): string | undefined => (typeof data === 'string' ? data : undefined);

/** An update's Data (the listings it updated) as UpdateListingData.parse returns it, when it is a safe integer; else undefined (zod decides). */
export const quickUpdateData = (data: unknown): number | undefined => (isInt(data) ? data : undefined);

/**
 * A list page's Data as ListData.parse would return it, when it plainly is one (every item holds
 * exactly ListItem's members, in its order, of its types): the page is then not copied item by
 * item. Anything else (an extra member, another order, a wrong type) returns undefined and zod
 * decides and names the problem. test/api/list-data.test.ts holds the two to the same output.
 */
export function quickListData(data: unknown): ListData | undefined {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return undefined;
  const d = data as Record<string, unknown>;
  const keys = Object.keys(d);
  if (keys.length !== 2 || keys[0] !== 'List' || keys[1] !== 'VirtualCount') return undefined;
  if (!isInt(d.VirtualCount) || d.VirtualCount < 0 || !Array.isArray(d.List)) return undefined;
  for (const item of d.List as unknown[]) if (!plainListItem(item)) return undefined;
  return d as ListData;
}

/** One list item that ListItem.parse would return as it is (quickListData's check of each item). */
export function plainListItem(item: unknown): item is ListItem {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return false;
  const it = item as Record<string, unknown>;
  let i = 0;
  for (const key in it) {
    const member = LIST_ITEM_MEMBERS[i++];
    if (!member || member[0] !== key) return false;
    const v = it[key];
    if (member[1] ? typeof v !== 'string' : key === 'ID' ? !isInt(v) : typeof v !== 'number' || !Number.isFinite(v))
      return false;
  }
  return i === LIST_ITEM_MEMBERS.length;
}

export const DeleteRequest = z.strictObject({
  SerialNumber: z.string().min(1, 'must not be empty'),
  Keys: z.array(z.string().min(1)).min(1, 'must hold at least one key'),
  KeyType,
});
export type DeleteRequest = z.infer<typeof DeleteRequest>;

export const DeleteData = z.object({ SuccessCount: z.number().int().nonnegative() });
export type DeleteData = z.infer<typeof DeleteData>;
