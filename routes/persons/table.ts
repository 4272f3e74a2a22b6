import type { Person } from '../../schemas/person.js'

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\'': '&#39;' }

/** Text safe inside an HTML element or a quoted attribute. */
export function escapeHtml (text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char] as string)
}

/** The persons as one HTML `table`: a header row, then a row per person. No whitespace between tags. */
export function renderPersonsTable (persons: readonly Person[]): string {
  let html = '<table><tr><th>first name</th><th>last name</th></tr>'
  for (const { firstName, lastName } of persons) {
    html += `<tr><td>${escapeHtml(firstName)}</td><td>${escapeHtml(lastName)}</td></tr>`
  }
  return html + '</table>'
}
