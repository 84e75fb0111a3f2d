// The semantic rules of chatbot settings, on top of the spec's types in api/schemas.ts: the config
// loader already holds settings to those types; these are the rules a type cannot say (an e-mail
// field holds an address, a rate limit is positive, a language is a name, not a code).
import { z } from 'zod';
import { ChatbotSettings, chatbotSettingsShape as shape } from '../api/schemas.js';
import type { ValidationIssue } from '../errors.js';
import { nearest } from '../format/nearest.js';
import { canonicalLanguageName, languageNameOfCode, languageNames } from './languages.js';

const EMAIL = z.regexes.email;

const isUrl = (v: string) => {
  if (!URL.canParse(v)) return false;
  const { protocol, hostname } = new URL(v);
  return (protocol === 'https:' || protocol === 'http:') && hostname.includes('.');
};

const email = (field: z.ZodOptional<z.ZodString>) =>
  field.refine((v) => v === undefined || EMAIL.test(v), 'must be an e-mail address like name@example.com');
const url = (field: z.ZodOptional<z.ZodString>) =>
  field.refine((v) => v === undefined || isUrl(v), 'must be an absolute http(s) URL like https://example.com/page');
const positive = (field: z.ZodOptional<z.ZodNumber>) =>
  field.refine((v) => v === undefined || v > 0, 'must be a positive integer');

const language = shape.AIResponseLanguage.superRefine((v, ctx) => {
  if (v === undefined || canonicalLanguageName(v)) return;
  const name = languageNameOfCode(v);
  const near = name ? undefined : nearest(v, languageNames(2).values(), 2);
  ctx.addIssue({
    code: 'custom',
    message: name
      ? `must be a full language name, not a code: write "${name}"`
      : near
        ? `is not a language name; did you mean "${near}"?`
        : 'must be a full language name in English, like "English" or "Spanish"',
  });
});

/** ChatbotSettings with the semantic rules; the field types stay those of the shared schema. */
export const CheckedChatbotSettings = ChatbotSettings.extend({
  TalkToHumanEmail: email(shape.TalkToHumanEmail),
  EmailForDailyChatLogs: email(shape.EmailForDailyChatLogs),
  EmailForDailyLeads: email(shape.EmailForDailyLeads),
  FacebookUrl: url(shape.FacebookUrl),
  InstagramUrl: url(shape.InstagramUrl),
  WhatsappUrl: url(shape.WhatsappUrl),
  ChatbotPrivacyPolicyUrl: url(shape.ChatbotPrivacyPolicyUrl),
  RateLimitCount: positive(shape.RateLimitCount),
  RateLimitTime: positive(shape.RateLimitTime),
  AIResponseLanguage: language,
});

/**
 * Every problem of one chatbot's settings, each named by its path from `basePath`
 * (e.g. `chatbots[0].settings.ChatBubbleColor`). An empty list: the settings may be sent.
 */
export function checkSettings(settings: unknown, basePath: string): ValidationIssue[] {
  const parsed = CheckedChatbotSettings.safeParse(settings);
  if (parsed.success) return [];
  const record = settings && typeof settings === 'object' ? (settings as Record<string, unknown>) : {};
  return parsed.error.issues.flatMap((issue): ValidationIssue[] => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({
        field: `${basePath}.${key}`,
        value: record[key],
        rule: 'is not a chatbot setting of the spec',
      }));
    }
    const key = issue.path[0];
    return [
      {
        field: key === undefined ? basePath : `${basePath}.${String(key)}`,
        value: key === undefined ? settings : record[String(key)],
        rule: issue.message,
      },
    ];
  });
}

/** `chatbots[0].settings.ChatBubbleColor: must be rgb(r,g,b) with 0-255 each (got "red")` */
export function formatSettingsIssue(issue: ValidationIssue): string {
  return `${issue.field}: ${issue.rule} (got ${JSON.stringify(issue.value) ?? 'undefined'})`;
}
