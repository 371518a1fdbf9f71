/* schedlab's stage player, 3 of 7: a class's lecturer and followers. The lecturer's player (`leads`) tells each
 * stop, Play and Pause at once ({frame, speed}; speed 0: stopped there); a follower's is moved to the lecturer's
 * frame (`cursor_moves`) and plays on from it at the lecturer's speed or stops there (`playing`). The same move
 * carries the server's own cursor changes (Run N, a reset, a link). While the class is asked about a frame ahead,
 * a follower's frames end at the lecturer's (`bound`, kept by transport.js's ask and tick).
 */
(function () {
  'use strict';
  if (window.SchedlabPlayer) return;
  const parts = window.SchedlabPlayerParts, {SPEEDS} = parts;

  class Follow {
    /* The server moved the cursor (Run N, a reset, a link, the lecturer): follow it once its frame is here (a long
     * run comes in several messages), with the Step clicks carried over. */
    followCursor(m) {
      if (m.cursor_moves === this.cursorMoves) return;
      this.desired = m.cursor + this.stepsCarried;
      if (m.cursor >= this.views.length) return;
      this.cursorMoves = m.cursor_moves;
      this.stepsCarried = 0;
      this.reported = m.cursor;  // the server's own cursor: nothing to report back
      if (m.playing === 0) {  // the lecturer stopped here
        this.pause();
        this.desired = m.cursor;
      }
      this.show(m.cursor);
      if (m.playing > 0) this.playAlong(m.playing);
    }

    /* A lecturer's stop, Play or Pause, told the server at once; whether it was told. */
    tellClass(speed) {
      if (!this.leads || !this.tell || this.shown < 0) return false;
      this.tell({frame: this.shown, speed});
      return true;
    }

    /* A class's follower: the lecturer plays from the frame just shown, at `speed` (the nearest this player has). */
    playAlong(speed) {
      const nearest = SPEEDS.reduce((a, b) => (Math.abs(b - speed) < Math.abs(a - speed) ? b : a));
      this.$('.sp-speed').value = String(nearest);
      if (!this.playing) this.play();
      else {
        clearTimeout(this.timer);
        this.due = 0;
        this.tick();
      }
    }
  }

  parts.Follow = Follow;
})();
