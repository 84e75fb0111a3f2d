export type { ChatbotApi } from './types.js';
