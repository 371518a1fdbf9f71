/* schedlab's stage player, 1 of 7 (player/assets.PLAYER_FILES lists them in order): the decoder of the wire
 * delta, the one view-level codec. `decode(view before, delta)` is the view the delta describes, by the same rules
 * as viz/frame_payload.decode, its reference (tests/test_player_decode.py runs this file over golden deltas the
 * server encoded and compares). It also holds the wire format's names, which the player's other files read
 * through window.SchedlabPlayerParts (internal to the player; player.js lists what other scripts may use).
 */
(function () {
  'use strict';
  if (window.SchedlabPlayer) return;

  /* The wire format as the server names it (viz/frame_payload.py WIRE, written in here by
   * player/assets.player_sources): a request's fields, a block's, the metrics and a key frame travel as arrays,
   * read here only through the names of their positions (r[F.num_tokens], b[B.ref_count], m[M.num_running]). */
  const WIRE = SCHEDLAB_WIRE;
  const positions = names => Object.fromEntries(names.map((name, i) => [name, i]));
  const F = positions(WIRE.request), B = positions(WIRE.block), M = positions(WIRE.metrics), K = positions(WIRE.key_frame);
  const S = positions(WIRE.segment);  // a batch entry: one request's tokens this step (viz/budget.py)
  const EMPTY = WIRE.empty_view, SCALARS = WIRE.scalars, SPARSE = new Set(WIRE.sparse);

  /* The view a delta describes, given the view before it (the same rules as viz/frame_payload.decode). */
  function decode(prev, d) {
    if (!d || typeof d !== 'object') throw new Error('a frame is not an object');
    const view = {};
    for (const key of SCALARS) {
      if (!(key in d) && !SPARSE.has(key)) throw new Error('a frame lacks ' + key);
      view[key] = key in d ? d[key] : [];  // a sparse scalar is sent only when not empty
    }
    for (const key of WIRE.diffed) view[key] = key in d ? d[key] : prev[key];
    const blocks = 'nb' in d ? Array.from({length: d.nb}, () => WIRE.free_block) : prev.blocks.slice();
    for (const [id, ...block] of d.blk || []) {
      if (!(id >= 0 && id < blocks.length)) throw new Error('block ' + id + ' is outside the pool');
      blocks[id] = block;
    }
    const requests = prev.requests.slice(), tokens = prev.tokens.slice(), pieces = prev.pieces.slice();
    for (const [key, fields] of Object.entries(d.req || {})) {
      const rid = Number(key);
      if (rid === requests.length) { tokens.push([]); pieces.push(null); }
      else if (!(rid < requests.length)) throw new Error('request ' + rid + ' skips an id');
      requests[rid] = fields;
    }
    for (const [key, [length, runs]] of Object.entries(d.tok || {})) {  // a token not held is null
      const rid = Number(key);
      if (!(rid < tokens.length)) throw new Error('tokens of unknown request ' + rid);
      const ids = fit(tokens[rid], length);
      let texts = pieces[rid] === null ? null : fit(pieces[rid], length);
      for (const [start, runIds, runPieces] of runs) {
        if (!(start >= 0 && start + runIds.length <= length)) throw new Error(`tokens ${start}.. of request ${rid} are outside its ${length}`);
        ids.splice(start, runIds.length, ...runIds);
        if (runPieces === null) texts = null;
        else (texts = texts || fit([], length)).splice(start, runPieces.length, ...runPieces);
      }
      tokens[rid] = ids;
      pieces[rid] = texts;
    }
    return Object.assign(view, {blocks, requests, tokens, pieces});
  }

  const fit = (list, length) => Array.from({length}, (_, i) => (i < list.length ? list[i] : null));

  window.SchedlabPlayerParts = {WIRE, positions, F, B, M, K, S, EMPTY, decode};
})();
