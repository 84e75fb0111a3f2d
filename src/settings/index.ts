export { pushSettings, type SettingsDeps, type SettingsOptions } from './push-settings.js';
export type { ChatbotSettingsResult, SettingsReport, SettingsStatus } from './report.js';
export { formatSettingsReport, type SettingsReportView } from './report-format.js';
export { checkSettings, CheckedChatbotSettings, formatSettingsIssue } from './settings-schema.js';
export { SETTINGS_HASH_NS, settingsHash } from './settings-hash.js';
