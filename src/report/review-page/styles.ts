/**
 * The review page's stylesheet, inlined. Light and dark follow the system (`prefers-color-scheme`);
 * nothing is loaded from anywhere.
 */
export const REVIEW_PAGE_CSS = `
:root { color-scheme: light dark; --bg: #fff; --fg: #1d2125; --muted: #5f6b76; --line: #d9dee3; --panel: #f5f7f9;
  --accent: #2457c5; --done: #1f7a3d; --failed: #b3261e; --doubt: #a15c00; --running: #2457c5; --idle: #5f6b76;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #15181b; --fg: #e4e8ec; --muted: #9aa5b0; --line: #30363d; --panel: #1d2226;
    --accent: #7aa7ff; --done: #5fcf86; --failed: #ff8a80; --doubt: #f0b35a; --running: #7aa7ff; --idle: #9aa5b0; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); }
header { padding: 16px 24px 8px; border-bottom: 1px solid var(--line); }
header h1 { margin: 0; font-size: 20px; }
header p, .note { margin: 4px 0 0; color: var(--muted); }
main { display: flex; flex-direction: column; gap: 16px; padding: 16px 24px 40px; }
#summary { order: -1; display: grid; grid-template-columns: minmax(260px, 1fr) minmax(260px, 1.2fr); gap: 16px; }
#summary > div, details { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; }
#summary h2 { margin: 0 0 8px; font-size: 15px; }
.breakdowns { grid-column: 1 / -1; display: grid; grid-template-columns: repeat(auto-fit, minmax(440px, 1fr)); gap: 16px; background: none !important; border: 0 !important; padding: 0 !important; }
.breakdowns details[data-breakdown="price group"] { grid-column: 1 / -1; }
details { overflow-x: auto; }
details summary { cursor: pointer; font-weight: 600; }
.spent { font-size: 16px; margin: 0 0 8px; }
.spent.over { color: var(--failed); }
meter { width: 100%; height: 14px; }
.states { display: flex; flex-wrap: wrap; gap: 8px; align-content: flex-start; }
.states h2 { flex-basis: 100%; }
.states button { font: inherit; border: 1px solid var(--line); background: var(--bg); color: var(--fg); border-radius: 16px; padding: 4px 12px; cursor: pointer; }
.states button b { margin-left: 4px; }
.states button.attention { border-color: var(--failed); color: var(--failed); font-weight: 600; }
.states button.active { outline: 2px solid var(--accent); }
table { border-collapse: collapse; width: 100%; }
.table-scroll { overflow-x: auto; }
.totals td, .totals th { padding: 3px 8px; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
.totals td:first-child, .totals th:first-child { text-align: left; white-space: normal; overflow-wrap: anywhere; width: 100%; }
.toolbar { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; position: sticky; top: 0; background: var(--bg); padding: 8px 0; z-index: 1; }
.toolbar input, .toolbar select { font: inherit; padding: 4px 8px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
.toolbar input { flex: 1 1 260px; }
.pager-row { display: flex; align-items: center; gap: 8px; }
.pager { display: flex; gap: 6px; align-items: center; justify-content: flex-end; margin: 6px 0; }
.pager button { font: inherit; min-width: 32px; border: 1px solid var(--line); background: var(--bg); color: var(--fg); border-radius: 6px; cursor: pointer; }
.pager button:disabled { opacity: .4; cursor: default; }
#shown { color: var(--muted); margin-right: auto; }
.jobs th, .jobs td { padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; text-align: left; }
.jobs thead th { font-size: 12px; text-transform: uppercase; letter-spacing: .03em; color: var(--muted); }
.jobs tr.group th { background: var(--panel); font-size: 13px; padding-top: 10px; }
.jobs td.id { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; overflow-wrap: anywhere; min-width: 110px; max-width: 200px; }
.jobs td.price { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
.jobs small { color: var(--muted); }
.jobs td.text { min-width: 180px; max-width: 420px; cursor: pointer; }
.clamp { display: -webkit-box; -webkit-box-orient: vertical; -webkit-line-clamp: 4; overflow: hidden; white-space: pre-wrap; word-break: break-word; }
td.text.open .clamp { -webkit-line-clamp: unset; }
.jobs td.error { color: var(--failed); min-width: 180px; max-width: 300px; overflow-wrap: break-word; }
.jobs td.request { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 11px; color: var(--muted); word-break: break-all; max-width: 160px; }
.state { display: inline-block; border-radius: 10px; padding: 1px 8px; font-size: 12px; border: 1px solid currentColor; white-space: nowrap; }
.state.done { color: var(--done); } .state.failed { color: var(--failed); font-weight: 600; } .state.in_doubt { color: var(--doubt); font-weight: 600; }
.state.submitted, .state.submitting { color: var(--running); } .state.pending, .state.skipped { color: var(--idle); }
.state.blocked { color: var(--doubt); border-style: dashed; }
.tag { font: inherit; font-size: 12px; border: 1px solid var(--line); background: var(--panel); color: var(--fg); border-radius: 10px; padding: 0 8px; margin: 0 4px 4px 0; cursor: pointer; }
.player { display: flex; flex-direction: column; gap: 2px; }
.player audio { width: 220px; height: 32px; }
.player video { width: 220px; max-height: 160px; background: #000; }
.player img { width: 120px; height: 120px; object-fit: contain; background: var(--panel); border-radius: 4px; display: block; }
.player .glimpse { max-width: 320px; white-space: pre-wrap; font-size: 12px; overflow-wrap: anywhere; }
.player .file { font-size: 11px; color: var(--accent); word-break: break-all; }
.player.missing::after { content: "file not found beside this page"; font-size: 11px; color: var(--failed); }
.links ul { list-style: none; margin: 0 0 4px; padding: 0; font-family: system-ui, sans-serif; }
.links img { width: 48px; height: 48px; object-fit: cover; vertical-align: middle; margin-left: 4px; }
.empty td { text-align: center; color: var(--muted); padding: 24px; }
@media (max-width: 800px) { #summary { grid-template-columns: 1fr; } }
`;
