/* schedlab's radix tree view: what SGLang decides with, the renderer of the radix tree panel (a run whose scheduler
 * declares one: the SGLang twin), registered in the player's one registry of panels (player/panels.js): the tree
 * node by node (each node's tokens, KV slots, lock count, evictable or protected, its rank in the eviction order;
 * this step's inserts, splits and evictions marked, the matched prefix of each request admitted lit), the KV pool
 * as token slots (or pages) with what holds each, the waiting queue in the policy's order with each request's
 * cached prefix, and PrefillAdder's budgets as a bar. Everything is what the server sent of the frame's panel,
 * recorded from the twin (scheduler/sglang/tree_view.py, viz/sched_view.py); nothing is decided here. */
(function () {
  'use strict';
  if (!window.SchedlabPlayer || window.SchedlabTreeView) return;
  window.SchedlabTreeView = true;
  const KIND = 'radix_tree';  // the panel's id: scheduler/sglang/tree_view.py VIEW_KIND
  const SHOWN_RUNS = 3;  // a node shows at most this many runs of its slots, then "…"
  const esc = s => String(s).replace(/[&<>"']/g, ch => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[ch]));
  const visible = s => String(s).replace(/\n/g, '↵').replace(/ /g, '␣');

  function span(runs, t) {  // a node's KV slots, as the server's runs [first, last]: 4–9, 12 (in Chinese 4–9、12)
    const shown = runs.slice(0, SHOWN_RUNS).map(([a, b]) => (a === b ? `${a}` : `${a}–${b}`));
    return [...shown, ...(runs.length > SHOWN_RUNS ? ['…'] : [])].join(t('list_sep'));
  }

  function slotsHtml(runs, t) {  // "slots 4–9, 12", or "slot 13" for one
    const one = runs.length === 1 && runs[0][0] === runs[0][1];
    return `${esc(t(one ? 'slot' : 'slots'))} ${esc(span(runs, t))}`;
  }

  function tokensHtml(data, id, tokens, count) {  // the node's first tokens (the server's), and how many more
    const pieces = data.pieces && data.pieces[id];
    const cells = (pieces || tokens).map(p => `<span class="sp-t-tok">${esc(pieces ? visible(p) : p)}</span>`).join('');
    const more = count - tokens.length;
    return cells + (more > 0 ? `<span class="sp-t-more">… +${more}</span>` : '');
  }

  function nodeHtml(data, node, marks, t) {
    const [id, , tokens, slots, lock, rank, count] = node;
    const cls = ['sp-t-node', lock ? 'sp-t-protected' : 'sp-t-evictable'];
    const notes = [];
    if (marks.inserted.has(id)) { cls.push('sp-t-new'); notes.push(t('inserted')); }
    if (marks.heads.has(id)) { cls.push('sp-t-split'); notes.push(t('split')); }
    if (marks.cut.has(id)) { cls.push('sp-t-cut'); notes.push(t('cut')); }
    const hits = marks.lit.get(id);
    if (hits) { cls.push('sp-t-lit'); notes.push(t('hit', {ids: hits.join(t('list_sep'))})); }
    const state = lock ? t('locked', {n: lock}) : t('unlocked');
    const lru = rank === null ? '' : `<span class="sp-t-rank" title="${esc(t('rank_title'))}">${esc(t('rank', {n: rank}))}</span>`;
    return `<div class="${cls.join(' ')}" data-node="${id}" title="${esc(t('node_title', {id, n: count, slots: span(slots, t)}))}">
<span class="sp-t-id">n${id}</span>${tokensHtml(data, id, tokens, count)}
<span class="sp-t-meta">${slotsHtml(slots, t)} · ${esc(state)}</span>${lru}${notes.length ? `<span class="sp-t-note">${notes.map(esc).join(' · ')}</span>` : ''}</div>`;
  }

  function treeHtml(data, t) {
    const children = new Map();
    for (const node of data.nodes) {
      if (!children.has(node[1])) children.set(node[1], []);
      children.get(node[1]).push(node);
    }
    for (const [id, parent, tokens, slots, count] of data.evicted) {  // ghosts where they were
      if (!children.has(parent)) children.set(parent, []);
      children.get(parent).push({ghost: true, id, tokens, slots, count});
    }
    const marks = {inserted: new Set(data.inserted), heads: new Set(data.split.map(s => s[0])),
      cut: new Set(data.split.map(s => s[1])), lit: new Map()};
    for (const [rid, , path] of data.matched) for (const id of path) marks.lit.set(id, [...(marks.lit.get(id) || []), 'r' + rid]);
    const walk = parent => (children.get(parent) || []).map(node => node.ghost
      ? `<li><div class="sp-t-node sp-t-evicted" data-evicted="${node.id}"><span class="sp-t-id">n${node.id}</span>${tokensHtml(data, node.id, node.tokens, node.count)}<span class="sp-t-meta">${slotsHtml(node.slots, t)}</span><span class="sp-t-note">${esc(t('evicted'))}</span></div>${below(node.id)}</li>`
      : `<li>${nodeHtml(data, node, marks, t)}${below(node[0])}</li>`).join('');
    const below = id => (children.has(id) ? `<ul>${walk(id)}</ul>` : '');  // a ghost's own ghosts too (a leaf, then its parent)
    const body = walk(0);
    return `<div class="sp-t-root">${esc(t('root'))}</div>${body ? `<ul class="sp-t-tree">${body}</ul>` : `<div class="sp-t-empty">${esc(t('empty'))}</div>`}`;
  }

  function unitsHtml(data, t) {
    const palette = data.palette;
    const cells = data.units.map((held, unit) => {
      let cls = 'sp-t-free', style = '', tip = t('unit_empty', {unit});
      if (held === 'x') { cls = 'sp-t-reserved'; tip = t('unit_reserved', {unit}); }
      else if (held[0] === 'e') { cls = 'sp-t-u-evictable'; tip = t('unit_evictable', {unit, node: held.slice(1)}); }
      else if (held[0] === 'p') {
        const [node, rids] = held.slice(1).split(':');
        const first = rids ? Number(rids.split(',')[0]) : null;
        cls = 'sp-t-u-protected';
        style = first === null ? '' : ` style="border-bottom-color:${palette[first % palette.length]}"`;
        tip = t('unit_protected', {unit, node, ids: rids ? rids.split(',').map(r => 'r' + r).join(t('list_sep')) : '—'});
      } else if (held[0] === 'r') {
        const rid = Number(held.slice(1));
        cls = 'sp-t-u-request';
        style = ` style="background:${palette[rid % palette.length]}"`;
        tip = t('unit_request', {unit, id: rid});
      }
      return `<span class="sp-t-unit ${cls}"${style} title="${esc(tip)}"></span>`;
    });
    return cells.join('');
  }

  function waitingHtml(data, t) {
    if (!data.waiting.length) return `<span class="sp-t-empty">${esc(t('waiting_empty'))}</span>`;
    return data.waiting.map(([rid, cached], i) => `<span class="sp-t-wait${data.retracted.includes(rid) ? ' sp-t-retracted' : ''}" data-rid="${rid}">${i + 1}. r${rid} <b>${esc(t('cached', {n: cached}))}</b>${data.retracted.includes(rid) ? ` <i>${esc(t('retracted_mark'))}</i>` : ''}</span>`).join('');
  }

  function budgetHtml(data, t) {  // the bar, and its key: each part's colour and size (a thin part has no room for words)
    const b = data.budget;
    if (!b) return `<div class="sp-t-note-line">${esc(t('budget_none', {ratio: data.new_token_ratio}))}</div>`;
    // widths capped at the bar (an over-committed pass charges more than there is); the words say PrefillAdder's own
    // numbers (reserve + admitted = total_offset, left = rem_total_tokens, below 0 when over-committed)
    const whole = Math.max(b.available_and_evictable, 1);
    const reserve = Math.min(b.reserve, whole), taken = Math.max(Math.min(b.total_offset, whole) - reserve, 0);
    const left = Math.max(whole - reserve - taken, 0);
    const parts = [['reserve', reserve, t('reserve', {n: b.reserve})], ['taken', taken, t('taken', {n: b.admitted_offset})],
      ['left', left, t('left', {n: b.rem_total_tokens})]];
    const bar = parts.map(([part, n, said]) => (n > 0 ? `<span class="sp-t-seg sp-t-seg-${part}" style="width:${(100 * n / whole).toFixed(2)}%" title="${esc(said)}"></span>` : '')).join('');
    const key = parts.map(([part, , said]) => `<span data-part="${part}"><span class="sp-t-sw sp-t-seg-${part}"></span>${esc(said)}</span>`).join('');
    const chunk = b.chunked_prefill_size === null ? t('no_chunking') : t('chunk', {n: b.rem_chunk_tokens, of: b.chunked_prefill_size});
    return `<div class="sp-t-bar" data-testid="tree-budget">${bar}</div>
<div class="sp-t-budget-key" data-testid="tree-budget-key">${key}</div>
<div class="sp-t-note-line">${esc(t('budget_line', {total: b.available_and_evictable, ratio: b.new_token_ratio}))}</div>
<div class="sp-t-note-line">${esc(t('input', {n: b.rem_input_tokens, of: b.max_prefill_tokens}))} · ${esc(chunk)}</div>`;
  }

  function draw(player, data, panel) {
    window.SchedlabPlayer.placeBeside(panel);  // the tree, the policy's queue and the budget start in view at 1280x720
    if (!panel.className) {  // a new panel's box
      panel.className = 'sp-tree';
      panel.setAttribute('data-testid', 'tree-view');
    }
    const t = (key, params) => player.t('tree_' + key, params);
    const told = [];
    if (data.split.length) told.push(t('told_split', {n: data.split.length}));
    if (data.evicted.length) told.push(t('told_evicted', {n: data.evicted.length, tokens: data.evicted.reduce((s, e) => s + e[4], 0)}));
    if (data.retracted.length) told.push(t('told_retracted', {ids: data.retracted.map(r => 'r' + r).join(t('list_sep')), ratio: data.new_token_ratio}));
    const html = `<div class="sp-t-head"><span class="sp-vtitle">${esc(t('title'))}</span>
<span class="sp-t-sizes">${esc(t('sizes', {evictable: data.evictable_size, protected: data.protected_size, empty: data.available_size, size: data.size}))}</span></div>
${told.length ? `<div class="sp-t-told" data-testid="tree-told">${told.map(esc).join(' · ')}</div>` : ''}
<div class="sp-t-grid">
  <div class="sp-t-treebox" data-testid="tree-nodes">${treeHtml(data, t)}
    <div class="sp-t-key">${esc(t('key'))}</div></div>
  <div>
    <div class="sp-vtitle">${esc(t('waiting_title', {policy: data.policy}))}</div>
    <div class="sp-t-waiting" data-testid="tree-waiting">${waitingHtml(data, t)}</div>
    <div class="sp-vtitle">${esc(t('budget_title'))}</div>
    ${budgetHtml(data, t)}
  </div>
</div>
<div class="sp-vtitle">${esc(t(data.page_size > 1 ? 'pool_title_pages' : 'pool_title', {n: data.units.length - 1, page: data.page_size}))}</div>
<div class="sp-t-units" data-testid="tree-pool">${unitsHtml(data, t)}</div>
<div class="sp-t-key">${esc(t('pool_key'))}</div>`;
    if (panel.spHtml !== html) {
      panel.innerHTML = html;
      panel.spHtml = html;
    }
  }

  window.SchedlabPlayer.registerPanel(KIND, draw);
})();
