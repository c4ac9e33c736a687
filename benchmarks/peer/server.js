// boardgame.io's own server (Koa, socket.io, in-memory storage) with the peer's game.
//   node server.js PORT
'use strict';

const { Server } = require('boardgame.io/server');
const { Solitaire } = require('./game');

const port = Number(process.argv[2] || 8000);
const server = Server({ games: [Solitaire] });
server.run(port, () => console.log(`ready ${port}`));
