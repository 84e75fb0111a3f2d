import { describe, expect, it } from 'vitest';
import { checkSettings, formatSettingsIssue } from '../../src/settings/index.js';

const P = 'chatbots[0].settings';
const problems = (settings: unknown) => checkSettings(settings, P).map(formatSettingsIssue);

describe('checkSettings', () => {
  it('accepts settings that follow every rule', () => {
    expect(
      checkSettings(
        {
          Name: 'Oak Realty',
          ChatBubbleColor: 'rgb(12, 34, 255)',
          UserMessageColor: 'rgb(0,0,0)',
          TalkToHumanEmail: 'agent@oak-realty.com',
          EmailForDailyChatLogs: 'logs@oak-realty.com',
          EmailForDailyLeads: 'leads@oak-realty.com',
          FacebookUrl: 'https://facebook.com/oakrealty',
          InstagramUrl: 'https://instagram.com/oakrealty',
          WhatsappUrl: 'https://wa.me/15125550100',
          ChatbotPrivacyPolicyUrl: 'https://oak-realty.com/privacy',
          Temperature: 1,
          ChatBubbleAlign: 0,
          MessageLimit: -1,
          RateLimitCount: 20,
          RateLimitTime: 60,
          VerifyDomain: true,
          AIResponseLanguage: 'Spanish',
        },
        P,
      ),
    ).toEqual([]);
  });

  it('names a colour that is not rgb(r,g,b), with its path and value', () => {
    expect(problems({ ChatBubbleColor: 'red', UserMessageColor: 'rgb(256,0,0)' })).toEqual([
      `${P}.ChatBubbleColor: must be rgb(r,g,b) with 0-255 each (got "red")`,
      `${P}.UserMessageColor: must be rgb(r,g,b) with 0-255 each (got "rgb(256,0,0)")`,
    ]);
  });

  it('names each e-mail field that holds no address', () => {
    expect(
      problems({ TalkToHumanEmail: 'agent', EmailForDailyChatLogs: 'a@b', EmailForDailyLeads: 'x y@z.com' }),
    ).toEqual([
      `${P}.TalkToHumanEmail: must be an e-mail address like name@example.com (got "agent")`,
      `${P}.EmailForDailyChatLogs: must be an e-mail address like name@example.com (got "a@b")`,
      `${P}.EmailForDailyLeads: must be an e-mail address like name@example.com (got "x y@z.com")`,
    ]);
  });

  it('names each URL field that holds no absolute http(s) URL', () => {
    const issues = checkSettings(
      {
        FacebookUrl: 'facebook.com/oak',
        InstagramUrl: 'ftp://instagram.com/oak',
        WhatsappUrl: 'https://localhost',
        ChatbotPrivacyPolicyUrl: '/privacy',
      },
      P,
    );
    expect(issues.map((i) => i.field).sort()).toEqual([
      `${P}.ChatbotPrivacyPolicyUrl`,
      `${P}.FacebookUrl`,
      `${P}.InstagramUrl`,
      `${P}.WhatsappUrl`,
    ]);
    expect(new Set(issues.map((i) => i.rule))).toEqual(
      new Set(['must be an absolute http(s) URL like https://example.com/page']),
    );
  });

  it('names integer fields that hold fractions', () => {
    expect(
      checkSettings({ Temperature: 0.5, ChatBubbleAlign: 1.5, MessageLimit: 10.5 }, P).map((i) => i.field),
    ).toEqual([`${P}.Temperature`, `${P}.ChatBubbleAlign`, `${P}.MessageLimit`]);
  });

  it('holds MessageLimit to -1 or more', () => {
    expect(problems({ MessageLimit: -2 })).toEqual([`${P}.MessageLimit: must be -1 (unlimited) or more (got -2)`]);
    expect(checkSettings({ MessageLimit: -1 }, P)).toEqual([]);
    expect(checkSettings({ MessageLimit: 0 }, P)).toEqual([]);
  });

  it('names boolean fields given something else', () => {
    const issues = checkSettings({ VerifyDomain: 'yes', EnablePushToTalk: 1, ChatbotPopupOnce: null }, P);
    expect(issues.map((i) => [i.field, i.value])).toEqual([
      [`${P}.ChatbotPopupOnce`, null],
      [`${P}.EnablePushToTalk`, 1],
      [`${P}.VerifyDomain`, 'yes'],
    ]);
  });

  it('holds RateLimitCount and RateLimitTime to positive integers', () => {
    expect(problems({ RateLimitCount: 0, RateLimitTime: -5 })).toEqual([
      `${P}.RateLimitCount: must be a positive integer (got 0)`,
      `${P}.RateLimitTime: must be a positive integer (got -5)`,
    ]);
  });

  it('wants AIResponseLanguage as a full language name, and suggests one for a code', () => {
    expect(problems({ AIResponseLanguage: 'en' })).toEqual([
      `${P}.AIResponseLanguage: must be a full language name, not a code: write "English" (got "en")`,
    ]);
    expect(problems({ AIResponseLanguage: 'es-MX' })).toEqual([
      `${P}.AIResponseLanguage: must be a full language name, not a code: write "Mexican Spanish" (got "es-MX")`,
    ]);
    expect(problems({ AIResponseLanguage: 'Klingonese' })).toEqual([
      `${P}.AIResponseLanguage: must be a full language name in English, like "English" or "Spanish" (got "Klingonese")`,
    ]);
    for (const name of ['English', 'Spanish', 'German', 'Chinese', 'Vietnamese', 'Cantonese', 'french']) {
      expect(checkSettings({ AIResponseLanguage: name }, P), name).toEqual([]);
    }
  });

  it('names a key that is no setting of the spec', () => {
    expect(problems({ Colour: 'blue' })).toEqual([`${P}.Colour: is not a chatbot setting of the spec (got "blue")`]);
  });

  it('reports every problem at once', () => {
    const issues = checkSettings(
      {
        ChatBubbleColor: 'red',
        TalkToHumanEmail: 'nobody',
        FacebookUrl: 'fb',
        MessageLimit: -3,
        RateLimitTime: 0,
        AIResponseLanguage: 'de',
        VerifyDomain: 'no',
        Temperature: 'hot',
      },
      P,
    );
    expect(issues.map((i) => i.field.slice(P.length + 1)).sort()).toEqual(
      [
        'AIResponseLanguage',
        'ChatBubbleColor',
        'FacebookUrl',
        'MessageLimit',
        'RateLimitTime',
        'TalkToHumanEmail',
        'Temperature',
        'VerifyDomain',
      ].sort(),
    );
  });
});
