// The trace viewer: renders the JSON in #trace-data. Every string from the
// trace goes into the DOM through textContent (never markup), and nothing
// from the trace becomes a link or a URL. Sections render their content
// when first opened, a page at a time, so a large trace stays cheap.
(function () {
  'use strict';
  var PAGE = 200;
  var D = JSON.parse(document.getElementById('trace-data').textContent);
  var app = document.getElementById('app');
  var hasT = D.stats.timestamps;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null && text !== '') e.textContent = String(text);
    return e;
  }
  // token keeps a class name built from trace data to [a-z0-9_].
  function token(s) { return String(s || '').toLowerCase().replace(/[^a-z0-9_]/g, '_').slice(0, 40); }
  function badge(text, cls) { return el('span', 'badge ' + (cls || ''), text); }
  function at(t) { return t === undefined || t === null ? '' : '+' + (t / 1000).toFixed(3) + ' s'; }
  function dur(ms) { return ms < 1000 ? Math.round(ms) + ' ms' : (ms / 1000).toFixed(1) + ' s'; }
  function plural(n, one, many) { return n + ' ' + (n === 1 ? one : (many || one + 's')); }

  // section is a collapsible box whose body is built on first open.
  function section(parent, cls, fillHead, fillBody, open) {
    var box = el('section', 'box ' + cls);
    var head = el('button', 'head');
    head.type = 'button';
    head.setAttribute('aria-expanded', 'false');
    fillHead(head);
    box.appendChild(head);
    var body = null;
    head.addEventListener('click', function () {
      if (!body) {
        body = el('div', 'body');
        box.appendChild(body);
        fillBody(body);
      } else {
        body.hidden = !body.hidden;
      }
      head.setAttribute('aria-expanded', String(!body.hidden));
      box.classList.toggle('open', !body.hidden);
    });
    parent.appendChild(box);
    if (open) head.click();
    return box;
  }

  // paged renders list into parent PAGE items at a time.
  function paged(parent, list, render, what) {
    if (!list.length) { parent.appendChild(el('div', 'empty', 'no ' + what)); return; }
    var i = 0;
    var more = el('button', 'more');
    more.type = 'button';
    parent.appendChild(more);
    function next() {
      var end = Math.min(list.length, i + PAGE);
      var frag = document.createDocumentFragment();
      for (; i < end; i++) frag.appendChild(render(list[i], i));
      parent.insertBefore(frag, more);
      if (i >= list.length) more.remove();
      else more.textContent = 'show ' + Math.min(PAGE, list.length - i) + ' more ' + what + ' (' + (list.length - i) + ' left)';
    }
    more.addEventListener('click', next);
    next();
  }

  function frameHead(f) {
    var dir = f.d === '>' ? 'client → agent' : f.d === '<' ? 'agent → client' : 'note';
    var cls = f.d === '>' ? 'dir-out' : f.d === '<' ? 'dir-in' : 'dir-note';
    var h = el('div', 'fh mono');
    h.appendChild(el('span', cls, dir));
    h.appendChild(document.createTextNode('  line ' + f.n + (f.t !== undefined ? '  ' + at(f.t) : '') + '  '));
    var m = f.m || {};
    var what = m.method ? String(m.method) : ('id' in m ? (m.error ? 'error response' : 'response') + ' id ' + JSON.stringify(m.id) : '');
    what = what.slice(0, 300); // a name, not a payload: the frame's body has it all
    if (m.method === 'session/update' && m.params && m.params.update) what += ' ' + m.params.update.sessionUpdate;
    h.appendChild(el('b', '', f.d === '!' ? f.note.slice(0, 200) : what));
    return h;
  }
  function frameBody(f) {
    return el('pre', 'raw', f.d === '!' ? f.note : JSON.stringify(f.m, null, 2));
  }
  // rawToggle adds a button that shows the item's frames.
  function rawToggle(parent, it) {
    if (!it.f || !it.f.length) return;
    var b = el('button', 'link', 'raw (' + plural(it.fn || it.f.length, 'frame') + ')');
    b.type = 'button';
    var box = null;
    b.addEventListener('click', function () {
      if (box) { box.hidden = !box.hidden; return; }
      box = el('div', 'rawframes');
      it.f.forEach(function (i) {
        var f = D.frames[i];
        var d = el('div', 'frame');
        d.appendChild(frameHead(f));
        d.appendChild(frameBody(f));
        box.appendChild(d);
      });
      if (it.fn > it.f.length) box.appendChild(el('div', 'empty', 'the first ' + it.f.length + ' of ' + it.fn + ' frames; all are under "All frames"'));
      parent.appendChild(box);
    });
    return b;
  }

  function diffView(c) {
    var d = el('div', 'diff');
    d.appendChild(el('div', 'path mono', c.path || '(no path)'));
    if (c.note) d.appendChild(el('div', 'l file', c.note));
    (c.diff || []).forEach(function (line) {
      var cls = 'l';
      if (/^(---|\+\+\+|diff |index )/.test(line)) cls += ' file';
      else if (line[0] === '+') cls += ' add';
      else if (line[0] === '-') cls += ' del';
      else if (line.slice(0, 2) === '@@') cls += ' hunk';
      d.appendChild(el('div', cls, line || ' '));
    });
    return d;
  }

  function lazyPre(parent, label, text) {
    if (!text) return;
    var b = el('button', 'link', label);
    b.type = 'button';
    var pre = null;
    b.addEventListener('click', function () {
      if (pre) { pre.hidden = !pre.hidden; return; }
      pre = el('pre', 'raw', text);
      parent.appendChild(pre);
    });
    parent.appendChild(b);
    parent.appendChild(document.createTextNode(' '));
  }

  function contentView(parent, list) {
    (list || []).forEach(function (c) {
      if (c.type === 'diff') parent.appendChild(diffView(c));
      else parent.appendChild(el('pre', 'text', c.text));
    });
  }

  function toolCard(parent, tc) {
    var card = el('div', 'tool-card');
    var h = el('div');
    h.appendChild(el('span', 'tool-title', tc.title || tc.id));
    h.appendChild(document.createTextNode(' '));
    if (tc.kind) h.appendChild(badge(tc.kind));
    h.appendChild(document.createTextNode(' '));
    if (tc.status) h.appendChild(badge(tc.status, 's-' + token(tc.status)));
    card.appendChild(h);
    if (tc.hist && tc.hist.length) {
      card.appendChild(el('div', 'hist', 'status: ' + tc.hist.map(function (c) {
        return c.s + (hasT && c.t !== undefined ? ' (' + at(c.t) + ')' : '');
      }).join(' → ')));
    }
    if (tc.locs) card.appendChild(el('div', 'hist mono', tc.locs.join('  ')));
    if (tc.perm) {
      var pl = el('div', 'hist', 'permission: ');
      pl.appendChild(badge(tc.perm, 'answer-chip t-' + token(tc.permTone)));
      card.appendChild(pl);
    }
    // The content later updates replaced, oldest first, then the content
    // now: a rejected edit keeps its diff above the agent's refusal.
    if (tc.wasN) card.appendChild(el('div', 'hist', plural(tc.wasN, 'earlier content') + ' not shown (the raw frames have them)'));
    (tc.was || []).forEach(function (v) {
      var w = el('div', 'was');
      w.appendChild(el('div', 'hist', 'earlier content, replaced' + (hasT && v.t !== undefined ? ' at ' + at(v.t) : '')));
      contentView(w, v.content);
      card.appendChild(w);
    });
    if (tc.was && tc.was.length && tc.content) card.appendChild(el('div', 'hist', 'content now'));
    contentView(card, tc.content);
    var links = el('div');
    lazyPre(links, 'input', tc.in);
    lazyPre(links, 'output', tc.out);
    if (links.firstChild) card.appendChild(links);
    parent.appendChild(card);
  }

  function permView(parent, p) {
    var ul = el('ul', 'opts');
    (p.options || []).forEach(function (o) {
      ul.appendChild(el('li', 't-' + token(o.tone) + (o.id === p.option ? ' chosen' : ''), o.name + ' (' + o.id + (o.kind ? ', ' + o.kind : '') + ')'));
    });
    parent.appendChild(ul);
    var a = el('div', 'answer');
    if (!p.answer) {
      a.textContent = 'no answer in the trace';
    } else {
      a.appendChild(document.createTextNode('answer: '));
      a.appendChild(badge(p.answer === 'selected' ? (p.name || p.option) : p.answer, 'answer-chip a-' + token(p.answer) + ' t-' + token(p.tone)));
      var how = p.answer === 'withdrawn' ? ' (the agent withdrew the request)' : '';
      if (p.ms !== undefined) how += ' after ' + dur(p.ms);
      else how += ' (time not shown: the trace has no timestamps for the request or the answer)';
      a.appendChild(document.createTextNode(how));
      if (p.err) a.appendChild(el('pre', 'text', p.err));
    }
    parent.appendChild(a);
  }

  var KIND = { user: 'user', msg: 'agent', thought: 'thought', tool: 'tool call', perm: 'permission',
    error: 'error', note: 'note', event: 'event', plan: 'plan' };

  function itemView(it) {
    var d = el('div', 'item k-' + token(it.k));
    var meta = el('div', 'meta');
    meta.appendChild(el('span', 'kind', KIND[it.k] || it.k));
    if (hasT && it.t !== undefined) meta.appendChild(el('span', 'mono', at(it.t)));
    if (it.title && it.k !== 'tool') meta.appendChild(el('span', 'title', it.title));
    var raw = rawToggle(d, it);
    if (raw) meta.appendChild(raw);
    d.appendChild(meta);
    if (it.tool) toolCard(d, it.tool);
    if (it.perm) permView(d, it.perm);
    if (it.text && !it.tool) d.appendChild(el('pre', 'text', it.text));
    return d;
  }

  function segHead(s, g) {
    return function (h) {
      if (g.kind === 'turn') {
        h.appendChild(el('span', 'name', 'Turn ' + g.n));
        h.appendChild(el('span', 'sub', g.prompt || '(empty prompt)'));
        if (g.stop) h.appendChild(badge(g.stop, 's-' + token(g.stop)));
        else if (!g.ended) h.appendChild(badge('no end in the trace'));
        else h.appendChild(badge('ended'));
      } else {
        h.appendChild(el('span', 'name', 'Outside a turn'));
        h.appendChild(el('span', 'sub', 'setup, replay or updates between turns'));
      }
      var c = g.counts || {};
      var bits = [plural(g.items.length, 'item')];
      if (c.tool) bits.push(plural(c.tool, 'tool call'));
      if (c.perm) bits.push(plural(c.perm, 'permission'));
      if (c.error) bits.push(plural(c.error, 'error'));
      if (hasT && g.t0 !== undefined && g.t1 !== undefined) bits.push(dur(g.t1 - g.t0));
      h.appendChild(el('span', 'badge', bits.join(' · ')));
    };
  }

  function sessionView(parent, s, open) {
    var box = section(parent, 'session', function (h) {
      h.appendChild(el('span', 'name', 'Session ' + (s.id || '(no sessionId)')));
      var sub = [s.how];
      if (s.agent) sub.push(s.agent);
      if (s.proto) sub.push('protocol ' + s.proto);
      if (s.cwd) sub.push(s.cwd);
      h.appendChild(el('span', 'sub', sub.join(' · ')));
      var turns = s.segs.filter(function (g) { return g.kind === 'turn'; }).length;
      h.appendChild(badge(plural(turns, 'turn')));
    }, function (body) {
      paged(body, s.segs, function (g) {
        var b = section(document.createDocumentFragment(), 'seg ' + (g.kind === 'turn' ? 'turn' : 'outside'), segHead(s, g), function (tb) {
          paged(tb, g.items, itemView, 'items');
        }, g.open);
        if (g.kind === 'turn') b.setAttribute('data-turn', String(g.n));
        return b;
      }, 'turns');
    }, open);
    box.setAttribute('data-session', s.id);
  }

  function render() {
    var st = D.stats;
    app.appendChild(el('h1', '', D.title));
    var bits = [plural(st.frames, 'frame'), plural(st.lines, 'line'), plural(D.sessions.length, 'session'),
      plural(st.turns, 'turn'), plural(st.updates, 'update')];
    if (st.agent) bits.push('agent ' + st.agent);
    if (st.proto) bits.push('protocol ' + st.proto);
    app.appendChild(el('div', 'stats', bits.join(' · ')));
    if (st.truncated) app.appendChild(el('div', 'warn', 'The trace was cut at line ' + st.cutLine + ': it holds more than ' + st.maxBytes + ' bytes (MaxBytes, acp view --max-bytes). What follows is the trace up to that line.'));
    if (st.bad) app.appendChild(el('div', 'warn', plural(st.bad, 'line') + ' of the trace could not be read; see "Malformed lines"' +
      (st.bad > D.bad.length ? ' (the first ' + D.bad.length + ' are listed, the other ' + (st.bad - D.bad.length) + ' only counted: MaxMalformed)' : '') +
      '. Everything else is shown.'));
    if (!hasT) app.appendChild(el('div', 'warn', 'This trace has no timestamps ("t"): times, durations and how long permission answers took are not shown.'));
    if (D.bad.length) {
      section(app, 'bad', function (h) {
        h.appendChild(el('span', 'name', 'Malformed lines'));
        h.appendChild(badge(st.bad > D.bad.length ? D.bad.length + ' of ' + st.bad : D.bad.length));
      }, function (body) {
        paged(body, D.bad, function (b) {
          var d = el('div', 'item k-error');
          var m = el('div', 'meta');
          m.appendChild(el('span', 'kind', 'line ' + b.line));
          m.appendChild(el('span', 'title', b.err));
          d.appendChild(m);
          d.appendChild(el('pre', 'raw', b.text + (b.more ? '… (' + b.more + ' bytes more)' : '')));
          return d;
        }, 'lines');
      });
    }
    section(app, 'conn', function (h) {
      h.appendChild(el('span', 'name', 'Connection'));
      h.appendChild(el('span', 'sub', 'initialize, authentication, notes and messages of no session'));
      h.appendChild(badge(plural(D.conn.length, 'item')));
    }, function (body) { paged(body, D.conn, itemView, 'items'); });
    if (st.turns > 1) {
      var bar = el('div', 'stats');
      var all = el('button', 'link', 'open all turns');
      all.type = 'button';
      all.addEventListener('click', function () {
        document.querySelectorAll('section.session:not(.open) > button.head').forEach(function (h) { h.click(); });
        document.querySelectorAll('section.turn:not(.open) > button.head').forEach(function (h) { h.click(); });
      });
      var none = el('button', 'link', 'close all turns');
      none.type = 'button';
      none.addEventListener('click', function () {
        document.querySelectorAll('section.turn.open > button.head').forEach(function (h) { h.click(); });
      });
      bar.appendChild(all);
      bar.appendChild(document.createTextNode(' · '));
      bar.appendChild(none);
      app.appendChild(bar);
    }
    var openSessions = D.sessions.length <= 20;
    paged(app, D.sessions, function (s) {
      var f = document.createDocumentFragment();
      // The session of the turn opened at load is open, however many.
      sessionView(f, s, openSessions || s.segs.some(function (g) { return g.open; }));
      return f;
    }, 'sessions');
    section(app, 'frames', function (h) {
      h.appendChild(el('span', 'name', 'All frames'));
      h.appendChild(badge(D.frames.length));
    }, function (body) {
      paged(body, D.frames, function (f) {
        var d = el('div', 'frame');
        var head = frameHead(f);
        d.appendChild(head);
        var pre = null;
        head.style.cursor = 'pointer';
        head.addEventListener('click', function () {
          if (pre) { pre.hidden = !pre.hidden; return; }
          pre = frameBody(f);
          d.appendChild(pre);
        });
        return d;
      }, 'frames');
    });
    document.documentElement.setAttribute('data-rendered', 'true');
  }
  render();
})();
