export { discordMarkdownToHtml, escapeHtml, renderDiscordMarkdown } from './discord-markdown';
export type { MarkdownHtmlOptions, MarkdownSink, MarkdownTag } from './discord-markdown';
