package lua

import (
	"strconv"
	"strings"

	glua "github.com/yuin/gopher-lua"
)

// This file holds the pattern functions of the string library scripts get: string.find,
// string.match, string.gmatch (and its old name gfind) and string.gsub. gopher-lua's own run
// their backtracking in Go without looking at the call's context, so a pattern such as
// "a-a-a-a-a-a-b" on a few hundred bytes, or ".-b" on a long string, ran for minutes or hours
// past the call's budget, and gsub built its result in time quadratic in the number of
// matches. These versions give the same results as gopher-lua's (the patterns of Lua 5.1 as
// gopher-lua reads them, including its quirks: "%g" is a plain 'g', a range next to a class
// matches nothing, string.match without a match returns no value), but count their steps and
// stop with an error once the call's context is done, so the engine's time and memory budgets
// hold; gsub assembles its result in linear time. Plain finds and empty patterns still go to
// gopher-lua's string.find, which does no backtracking.

// patternDepthLimit bounds the nesting of quantified items a match may recurse through, so that
// a pattern of millions of items fails instead of exhausting the goroutine's stack.
const patternDepthLimit = 100000

// patternCheckEvery is how many matching steps pass between two looks at the context.
const patternCheckEvery = 1 << 12

// byteSet is a set of bytes, one bit each.
type byteSet [4]uint64

func (s *byteSet) add(c byte)      { s[c>>6] |= 1 << (c & 63) }
func (s *byteSet) has(c byte) bool { return s[c>>6]&(1<<(c&63)) != 0 }
func (s *byteSet) union(o *byteSet) {
	s[0], s[1], s[2], s[3] = s[0]|o[0], s[1]|o[1], s[2]|o[2], s[3]|o[3]
}
func (s *byteSet) complement() byteSet { return byteSet{^s[0], ^s[1], ^s[2], ^s[3]} }

func setOf(match func(c byte) bool) byteSet {
	var s byteSet
	for c := 0; c < 256; c++ {
		if match(byte(c)) {
			s.add(byte(c))
		}
	}
	return s
}

// classSets are the sets of the %a, %c, ... classes; an upper-case letter is the complement.
var classSets = map[byte]byteSet{
	'a': setOf(func(c byte) bool { return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' }),
	'c': setOf(func(c byte) bool { return c <= 0x1f || c == 0x7f }),
	'd': setOf(func(c byte) bool { return '0' <= c && c <= '9' }),
	'l': setOf(func(c byte) bool { return 'a' <= c && c <= 'z' }),
	'p': setOf(func(c byte) bool {
		return 0x21 <= c && c <= 0x2f || 0x3a <= c && c <= 0x40 || 0x5b <= c && c <= 0x60 || 0x7b <= c && c <= 0x7e
	}),
	's': setOf(func(c byte) bool { return strings.IndexByte(" \f\n\r\t\v", c) >= 0 }),
	'u': setOf(func(c byte) bool { return 'A' <= c && c <= 'Z' }),
	'w': setOf(func(c byte) bool { return '0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' }),
	'x': setOf(func(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }),
	'z': setOf(func(c byte) bool { return c == 0 }),
}

// escapedSet is the set of "%c": a class, or the byte itself. end (no byte after the '%')
// matches nothing.
func escapedSet(c byte, end bool) byteSet {
	var s byteSet
	switch {
	case end:
	case classSets[c] != (byteSet{}):
		s = classSets[c]
	case 'A' <= c && c <= 'Z' && classSets[c+'a'-'A'] != (byteSet{}):
		upper := classSets[c+'a'-'A']
		s = upper.complement()
	default:
		s.add(c)
	}
	return s
}

// itemOp is what one item of a compiled pattern does.
type itemOp uint8

const (
	opOne      itemOp = iota // one byte of set
	opGreedy                 // set* : as many as possible, then fewer
	opAtLeast                // set+ : one or more, as many as possible first
	opLazy                   // set- : as few as possible, then more
	opOptional               // set? : one if possible, else none
	opOpen                   // start of capture n
	opClose                  // end of capture n
	opPosition               // position capture n: ()
	opBackref                // %n: the text of capture n again
	opBalance                // %bxy
)

type patternItem struct {
	op  itemOp
	set byteSet
	// n is the capture of opOpen, opClose and opPosition, and the capture referred to by
	// opBackref.
	n int
	// open and close are the bytes of opBalance; -1 (a pattern that ends early) matches nothing.
	open, close int
	// For opBackref: whether the reference is invalid here (gopher-lua's "invalid capture
	// index": no capture of that number has started before it), and whether capture n is
	// still open at this point.
	invalid, unclosed bool
}

// pattern is a compiled pattern.
type pattern struct {
	items    []patternItem
	anchored bool // a leading '^'
	tailed   bool // a trailing '$'
	// captures is how many captures (position captures included) the pattern has; position
	// says which are position captures.
	captures int
	position []bool
}

// patternError is a pattern that does not compile, raised as a Lua error.
type patternError string

func (e patternError) Error() string { return string(e) }

// compilePattern reads a pattern the way gopher-lua does.
func compilePattern(p string) (pat *pattern, err error) {
	c := &patternCompiler{src: p, pat: &pattern{}}
	defer func() {
		if r := recover(); r != nil {
			perr, ok := r.(patternError)
			if !ok {
				panic(r)
			}
			pat, err = nil, perr
		}
	}()
	if strings.HasPrefix(p, "^") {
		c.pat.anchored = true
		c.pos = 1
	}
	c.sequence(true)
	return c.pat, nil
}

type patternCompiler struct {
	src string
	pos int
	pat *pattern
	// maxSlot is the highest capture slot (2n for a started capture n, 2n+1 for a closed one,
	// 0 for the whole match) a match has written when it reaches the item being compiled.
	maxSlot int
	// closed tells, per capture, whether it is closed at the item being compiled.
	closed []bool
}

func (c *patternCompiler) fail(msg string) {
	panic(patternError(msg + " at " + strconv.Itoa(c.pos)))
}

func (c *patternCompiler) add(it patternItem) { c.pat.items = append(c.pat.items, it) }

func (c *patternCompiler) newCapture(position bool) int {
	c.pat.captures++
	c.pat.position = append(c.pat.position, position)
	c.closed = append(c.closed, position)
	return c.pat.captures
}

// sequence compiles items up to the end of the pattern (top level) or up to the ')' that
// closes the capture being compiled, which it leaves for the caller.
func (c *patternCompiler) sequence(top bool) {
	// single is the index of the last item of this sequence when it is a plain byte set, the
	// only kind of item a quantifier applies to; -1 otherwise.
	single := -1
	for c.pos < len(c.src) {
		ch := c.src[c.pos]
		switch ch {
		case '%':
			if c.pos+1 == len(c.src) {
				c.pos++
				single = c.one(escapedSet(0, true))
				continue
			}
			switch next := c.src[c.pos+1]; {
			case next == '0':
				c.pos++
				c.fail("invalid capture index")
			case '1' <= next && next <= '9':
				c.pos += 2
				n := int(next - '0')
				it := patternItem{op: opBackref, n: n, invalid: 2*n >= c.maxSlot}
				it.unclosed = !it.invalid && n <= len(c.closed) && !c.closed[n-1]
				c.add(it)
				single = -1
			case next == 'b':
				c.pos += 2
				it := patternItem{op: opBalance, open: -1, close: -1}
				if c.pos < len(c.src) {
					it.open = int(c.src[c.pos])
					c.pos++
				}
				if c.pos < len(c.src) {
					it.close = int(c.src[c.pos])
					c.pos++
				}
				c.add(it)
				single = -1
			default:
				c.pos += 2
				single = c.one(escapedSet(next, false))
			}
		case '.':
			c.pos++
			single = c.one(byteSet{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)})
		case '[':
			c.pos++
			single = c.one(c.bracket())
		case ')':
			if top {
				c.fail("invalid ')'")
			}
			return
		case '(':
			c.pos++
			if c.pos < len(c.src) && c.src[c.pos] == ')' {
				c.pos++
				n := c.newCapture(true)
				c.add(patternItem{op: opPosition, n: n})
				c.maxSlot = max(c.maxSlot, 2*n+1)
			} else {
				n := c.newCapture(false)
				c.add(patternItem{op: opOpen, n: n})
				c.maxSlot = max(c.maxSlot, 2*n)
				c.sequence(false)
				if c.pos >= len(c.src) || c.src[c.pos] != ')' {
					c.fail("unfinished capture")
				}
				c.pos++
				c.add(patternItem{op: opClose, n: n})
				c.maxSlot = max(c.maxSlot, 2*n+1)
				c.closed[n-1] = true
			}
			single = -1
		case '*', '+', '-', '?':
			c.pos++
			if single >= 0 {
				c.pat.items[single].op = quantifier(ch)
				single = -1
				continue
			}
			single = c.one(literal(ch))
		case '$':
			c.pos++
			if top && c.pos == len(c.src) {
				c.pat.tailed = true
				continue
			}
			single = c.one(literal(ch))
		default:
			c.pos++
			single = c.one(literal(ch))
		}
	}
}

// quantifier is the item kind a quantifier character makes of the byte set before it.
func quantifier(ch byte) itemOp {
	switch ch {
	case '*':
		return opGreedy
	case '+':
		return opAtLeast
	case '-':
		return opLazy
	default:
		return opOptional
	}
}

func literal(ch byte) byteSet {
	var s byteSet
	s.add(ch)
	return s
}

// one adds a single-byte item and returns its index.
func (c *patternCompiler) one(set byteSet) int {
	c.add(patternItem{op: opOne, set: set})
	return len(c.pat.items) - 1
}

// setMember is one member of a bracket class: a plain byte, an escaped class, or a range.
type setMember struct {
	set   byteSet
	plain bool // a plain byte, which can start or end a range
	ch    byte
}

// bracket compiles a [set] whose '[' is consumed, up to and including its ']'. As in
// gopher-lua, a ']' or '-' first is a plain byte, "x-y" is a range only between plain bytes
// (anything else matches nothing), and a '-' before the ']' is a plain '-'.
func (c *patternCompiler) bracket() byteSet {
	negate := false
	if c.pos < len(c.src) && c.src[c.pos] == '^' {
		negate = true
		c.pos++
	}
	var members []setMember
	isRange := false
	for {
		if c.pos >= len(c.src) {
			c.fail("unexpected EOS")
		}
		ch := c.src[c.pos]
		switch {
		case ch == ']' && len(members) > 0:
			c.pos++
			if isRange {
				members = append(members, setMember{set: literal('-'), plain: true, ch: '-'})
			}
			var s byteSet
			for i := range members {
				s.union(&members[i].set)
			}
			if negate {
				return s.complement()
			}
			return s
		case ch == '-' && len(members) > 0:
			c.pos++
			isRange = true
			continue
		case ch == '%':
			c.pos++
			if c.pos >= len(c.src) {
				c.fail("unexpected EOS")
			}
			members = append(members, setMember{set: escapedSet(c.src[c.pos], false)})
			c.pos++
		default:
			c.pos++
			members = append(members, setMember{set: literal(ch), plain: true, ch: ch})
		}
		if isRange {
			lo, hi := members[len(members)-2], members[len(members)-1]
			var s byteSet
			if lo.plain && hi.plain {
				for b := int(lo.ch); b <= int(hi.ch); b++ {
					s.add(byte(b))
				}
			}
			members = append(members[:len(members)-2], setMember{set: s})
			isRange = false
		}
	}
}

// matcher runs a compiled pattern on one subject, counting its steps.
type matcher struct {
	L     *glua.LState
	pat   *pattern
	src   string
	caps  []int // slot 2n is the start of capture n, 2n+1 its end; 0 and 1 the whole match
	steps int
	depth int
}

func newMatcher(L *glua.LState, pat *pattern, src string) *matcher {
	return &matcher{L: L, pat: pat, src: src, caps: make([]int, 2*(pat.captures+1))}
}

// step counts one step and, every patternCheckEvery steps, stops the match with a Lua error
// once the call's context is done (its budget is spent).
func (m *matcher) step(n int) {
	m.steps += n
	if m.steps < patternCheckEvery {
		return
	}
	m.steps = 0
	if ctx := m.L.Context(); ctx != nil && ctx.Err() != nil {
		m.L.RaiseError("pattern matching stopped: %v", ctx.Err())
	}
}

// at tries the pattern at position sp and returns the end of the match.
func (m *matcher) at(sp int) (int, bool) {
	clear(m.caps)
	m.caps[0] = sp
	end, ok := m.match(0, sp)
	if ok {
		m.caps[1] = end
	}
	return end, ok
}

// match matches items[i:] at sp. Captures are written as the items are passed; a later
// attempt on another path overwrites them before anything reads them, since every path runs
// through the items in order.
func (m *matcher) match(i, sp int) (int, bool) {
	m.depth++
	defer func() { m.depth-- }()
	if m.depth > patternDepthLimit {
		m.L.RaiseError("pattern too complex")
	}
	items, src := m.pat.items, m.src
	for ; i < len(items); i++ {
		m.step(1)
		it := &items[i]
		switch it.op {
		case opOne:
			if sp >= len(src) || !it.set.has(src[sp]) {
				return 0, false
			}
			sp++
		case opGreedy, opAtLeast:
			n := 0
			for sp+n < len(src) && it.set.has(src[sp+n]) {
				n++
			}
			m.step(n)
			least := 0
			if it.op == opAtLeast {
				least = 1
			}
			for k := n; k >= least; k-- {
				if end, ok := m.match(i+1, sp+k); ok {
					return end, true
				}
			}
			return 0, false
		case opLazy:
			for k := 0; ; k++ {
				if end, ok := m.match(i+1, sp+k); ok {
					return end, true
				}
				if sp+k >= len(src) || !it.set.has(src[sp+k]) {
					return 0, false
				}
			}
		case opOptional:
			if sp < len(src) && it.set.has(src[sp]) {
				if end, ok := m.match(i+1, sp+1); ok {
					return end, true
				}
			}
		case opOpen:
			m.caps[2*it.n] = sp
		case opClose:
			m.caps[2*it.n+1] = sp
		case opPosition:
			m.caps[2*it.n], m.caps[2*it.n+1] = sp+1, sp+1
		case opBackref:
			start, end := m.caps[2*it.n], m.caps[2*it.n+1]
			switch {
			case it.invalid:
				m.L.RaiseError("invalid capture index")
			case m.pat.position[it.n-1]:
				if start > len(src) {
					m.L.RaiseError("invalid capture index")
				}
				end = start
			case it.unclosed:
				if start != 0 {
					m.L.RaiseError("invalid capture index")
				}
				end = 0
			}
			text := src[start:end]
			m.step(len(text))
			if !strings.HasPrefix(src[sp:], text) {
				return 0, false
			}
			sp += len(text)
		case opBalance:
			if sp >= len(src) || int(src[sp]) != it.open {
				return 0, false
			}
			depth, j := 1, sp+1
			for ; j < len(src); j++ {
				if int(src[j]) == it.close {
					depth--
				}
				if depth == 0 {
					break
				}
				if int(src[j]) == it.open {
					depth++
				}
			}
			m.step(j - sp)
			if depth != 0 {
				return 0, false
			}
			sp = j + 1
		}
	}
	if m.pat.tailed && sp < len(src) {
		return 0, false
	}
	return sp, true
}

// findMatches runs the pattern from offset as gopher-lua does: at each position in turn, going
// on after the end of a match (or one past an empty one), at most limit matches (all when limit
// is negative; with limit 0 the search stops after the first position that does not match),
// only at offset when the pattern is anchored. It returns the capture slots of every match,
// 2*(captures+1) each.
func findMatches(L *glua.LState, pat *pattern, src string, offset, limit int) []int {
	m := newMatcher(L, pat, src)
	var out []int
	count := 0
	for sp := offset; sp <= len(src); {
		end, ok := m.at(sp)
		sp++
		if ok {
			sp = max(sp, end)
			out = append(out, m.caps...)
			count++
		}
		if count == limit || pat.anchored {
			break
		}
	}
	return out
}

func mustCompile(L *glua.LState, p string) *pattern {
	pat, err := compilePattern(p)
	if err != nil {
		L.RaiseError("%s", err.Error())
	}
	return pat
}

// pushCapture pushes capture n (n >= 1) of a match: a number for a position capture, else the
// captured text.
func pushCapture(L *glua.LState, pat *pattern, src string, caps []int, n int) {
	if pat.position[n-1] {
		L.Push(glua.LNumber(caps[2*n]))
		return
	}
	L.Push(glua.LString(src[caps[2*n]:caps[2*n+1]]))
}

// patternFunctions returns string.find, string.match, string.gmatch and string.gsub; plainFind
// is gopher-lua's string.find, for plain finds and empty patterns.
func patternFunctions(plainFind glua.LGFunction) map[string]glua.LGFunction {
	return map[string]glua.LGFunction{
		"find": func(L *glua.LState) int {
			src, p := L.CheckString(1), L.CheckString(2)
			if p == "" || (L.GetTop() == 4 && glua.LVAsBool(L.Get(4))) {
				return plainFind(L)
			}
			init := stringStart(src, L.OptInt(3, 1))
			pat := mustCompile(L, p)
			caps := findMatches(L, pat, src, init, 1)
			if len(caps) == 0 {
				L.Push(glua.LNil)
				return 1
			}
			L.Push(glua.LNumber(caps[0] + 1))
			L.Push(glua.LNumber(caps[1]))
			for n := 1; n <= pat.captures; n++ {
				pushCapture(L, pat, src, caps, n)
			}
			return pat.captures + 2
		},
		"match": func(L *glua.LState) int {
			src, p := L.CheckString(1), L.CheckString(2)
			offset := L.OptInt(3, 1)
			if offset < 0 {
				offset = len(src) + offset + 1
			}
			offset = max(offset-1, 0)
			pat := mustCompile(L, p)
			caps := findMatches(L, pat, src, offset, 1)
			if len(caps) == 0 {
				return 0 // gopher-lua returns nothing, not nil, when nothing matches
			}
			return pushCaptures(L, pat, src, caps)
		},
		"gmatch": func(L *glua.LState) int {
			src, p := L.CheckString(1), L.CheckString(2)
			pat := mustCompile(L, p)
			// The matches are found on the first call, as gopher-lua does, so that an error in
			// the pattern is raised there.
			caps := findMatches(L, pat, src, 0, -1)
			per := 2 * (pat.captures + 1)
			L.Push(L.NewFunction(func(L *glua.LState) int {
				if len(caps) == 0 {
					return 0
				}
				this := caps[:per]
				caps = caps[per:]
				return pushCaptures(L, pat, src, this)
			}))
			return 1
		},
		"gsub": stringGsub,
	}
}

// pushCaptures pushes what string.match and the gmatch iterator return for one match: its
// captures, or the whole match when the pattern has none.
func pushCaptures(L *glua.LState, pat *pattern, src string, caps []int) int {
	if pat.captures == 0 {
		L.Push(glua.LString(src[caps[0]:caps[1]]))
		return 1
	}
	for n := 1; n <= pat.captures; n++ {
		pushCapture(L, pat, src, caps, n)
	}
	return pat.captures
}

// stringStart turns a Lua start index (1-based, negative from the end) into an offset.
func stringStart(src string, i int) int {
	if i != 0 {
		i--
	}
	if i < 0 {
		i = len(src) + i + 1
	}
	return max(i, 0)
}

// stringGsub is string.gsub(s, pattern, repl[, n]) with gopher-lua's results: repl is a string
// (%0-%9 name captures, %% is '%', any other %x stays as it is), a table indexed by the first
// capture, or a function of the captures; a false or nil value keeps the match. It returns the
// new string and the number of matches.
func stringGsub(L *glua.LState) int {
	src, p := L.CheckString(1), L.CheckString(2)
	L.CheckTypes(3, glua.LTString, glua.LTTable, glua.LTFunction)
	repl := L.CheckAny(3)
	limit := L.OptInt(4, -1)
	pat := mustCompile(L, p)
	caps := findMatches(L, pat, src, 0, limit)
	if len(caps) == 0 {
		L.SetTop(1)
		L.Push(glua.LNumber(0))
		return 2
	}
	per := 2 * (pat.captures + 1)
	var b strings.Builder
	b.Grow(len(src))
	last := 0
	for at := 0; at < len(caps); at += per {
		m := caps[at : at+per]
		var value string
		keep := false
		switch r := repl.(type) {
		case glua.LString:
			value = expandReplacement(L, pat, src, m, string(r))
		case *glua.LTable:
			var v glua.LValue
			n := 0
			if pat.captures > 0 {
				n = 1
			}
			switch {
			case n == 1 && pat.position[0]:
				v = L.GetTable(r, glua.LNumber(m[2]))
			default:
				v = L.GetField(r, src[m[2*n]:m[2*n+1]])
			}
			keep, value = glua.LVIsFalse(v), glua.LVAsString(v)
		case *glua.LFunction:
			L.Push(r)
			nargs := 1
			if pat.captures == 0 {
				L.Push(glua.LString(src[m[0]:m[1]]))
			} else {
				nargs = pat.captures
				for n := 1; n <= pat.captures; n++ {
					if pat.position[n-1] {
						L.Push(glua.LNumber(m[2*n]))
					} else {
						L.Push(glua.LString(captureText(L, pat, src, m, n)))
					}
				}
			}
			L.Call(nargs, 1)
			v := L.Get(-1)
			L.Pop(1)
			keep, value = glua.LVIsFalse(v), glua.LVAsString(v)
		}
		if keep {
			continue
		}
		b.WriteString(src[last:m[0]])
		b.WriteString(value)
		last = m[1]
	}
	b.WriteString(src[last:])
	L.Push(glua.LString(b.String()))
	L.Push(glua.LNumber(len(caps) / per))
	return 2
}

// captureText is the text a replacement string's %n stands for: %0 the whole match, %1 the
// whole match too when the pattern has no capture, a position capture its position.
func captureText(L *glua.LState, pat *pattern, src string, m []int, n int) string {
	if n > 1 && n > pat.captures {
		L.RaiseError("invalid capture index")
	}
	if n > pat.captures {
		n = 0
	}
	if n > 0 && pat.position[n-1] {
		return strconv.Itoa(m[2*n])
	}
	return src[m[2*n]:m[2*n+1]]
}

// expandReplacement expands a gsub replacement string for one match.
func expandReplacement(L *glua.LState, pat *pattern, src string, m []int, repl string) string {
	if strings.IndexByte(repl, '%') < 0 {
		return repl
	}
	var b strings.Builder
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		if c != '%' || i == len(repl)-1 {
			b.WriteByte(c)
			continue
		}
		i++
		switch d := repl[i]; {
		case d == '%':
			b.WriteByte('%')
		case '0' <= d && d <= '9':
			b.WriteString(captureText(L, pat, src, m, int(d-'0')))
		default:
			b.WriteByte('%')
			b.WriteByte(d)
		}
	}
	return b.String()
}
