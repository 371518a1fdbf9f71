"""The stage player: plain JavaScript and CSS run in the browser; `player.assets` reads them for the server."""
