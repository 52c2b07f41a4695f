package cli

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// docUsage is one `flotilla ...` command line found in a fenced code block
// of the documentation: where it is, and its words after the binary.
type docUsage struct {
	where string   // file:line of the line the command starts on
	words []string // shell words after "flotilla", up to the end of the command
}

// TestDocs checks that every `flotilla` command shown in README.md and
// docs/**/*.md code blocks names commands and flags that exist in the
// command tree NewRootCommand builds, so the book cannot drift from the CLI.
func TestDocs(t *testing.T) {
	root := filepath.Join("..", "..")
	files := []string{filepath.Join(root, "README.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatalf("list docs: %v", err)
	}
	var usages []docUsage
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("read %s: %v", f, err)
		}
		rel, _ := filepath.Rel(root, f)
		usages = append(usages, docUsages(filepath.ToSlash(rel), string(text))...)
	}
	// A broken extractor would find nothing and pass: the book shows far more.
	if len(usages) < 50 {
		t.Fatalf("found %d flotilla commands in %d files, want at least 50: is the extractor broken?", len(usages), len(files))
	}
	for _, u := range usages {
		if err := checkUsage(NewRootCommand(), u.words); err != nil {
			t.Errorf("%s: flotilla %s: %v", u.where, strings.Join(u.words, " "), err)
		}
	}
}

func TestDocUsagesExtraction(t *testing.T) {
	for name, tc := range map[string]struct {
		doc  string
		want [][]string
	}{
		"commands outside code blocks are prose, not usages": {
			doc:  "Run `flotilla up --detach`, then\n```sh\nflotilla down\n```\n",
			want: [][]string{{"down"}},
		},
		"bin/flotilla counts, continuation lines join, comments go": {
			doc:  "```sh\nbin/flotilla register 1.2.3.4:6443 --token abc \\\n  --cluster-name edge-1   # a comment --nosuch\n# flotilla nosuch\n```\n",
			want: [][]string{{"register", "1.2.3.4:6443", "--token", "abc", "--cluster-name", "edge-1"}},
		},
		"a command ends at a shell operator, quotes hold a word": {
			doc:  "```\nkubectl apply -f x && flotilla token create --description \"for prod\" | head -1; flotilla version &\n```\n",
			want: [][]string{{"token", "create", "--description", "for prod"}, {"version"}},
		},
		"flotilla as an argument is no command": {
			doc:  "```sh\nhelm install flotilla charts/flotilla -n flotilla-system\n```\n",
			want: nil,
		},
	} {
		t.Run(name, func(t *testing.T) {
			var got [][]string
			for _, u := range docUsages("doc.md", tc.doc) {
				got = append(got, u.words)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("usages (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckUsage(t *testing.T) {
	for name, tc := range map[string]struct {
		words   []string
		wantErr string
	}{
		"a verb, a subverb and their flags":     {words: []string{"token", "create", "--ttl", "2h", "--print-register-command"}},
		"shorthands and placeholders":           {words: []string{"promote", "deploy", "<name>", "-n", "shop", "-C", "member1", "-o", "yaml"}},
		"flags after -- belong to someone else": {words: []string{"up", "--", "--nosuch"}},
		"a flag's value may look like a flag":   {words: []string{"up", "--controller-manager-arg=--fast-path-handoff=false"}},
		"an unknown verb":                       {words: []string{"nosuch"}, wantErr: `unknown command "nosuch"`},
		"an unknown subverb":                    {words: []string{"token", "nosuch"}, wantErr: `unknown command "nosuch" for "flotilla token"`},
		"an unknown flag":                       {words: []string{"up", "--nosuch=1"}, wantErr: `unknown flag --nosuch for "flotilla up"`},
		"a flag of another command":             {words: []string{"scheduler", "--controllers", "x"}, wantErr: `unknown flag --controllers for "flotilla scheduler"`},
		"an unknown shorthand":                  {words: []string{"get", "pods", "-Z"}, wantErr: `unknown flag -Z for "flotilla get"`},
		"help is every command's flag":          {words: []string{"join", "--help"}},
		"a subverb's own flags":                 {words: []string{"token", "list", "--karmada-context", "x"}},
	} {
		t.Run(name, func(t *testing.T) {
			err := checkUsage(NewRootCommand(), tc.words)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// docUsages returns the flotilla commands in the fenced code blocks of one
// Markdown document. A command starts where a shell command may start (a
// line's first word, or after |, ||, &&, ;, &, $( or ( ), with the binary
// written flotilla or as a path ending in /flotilla, and ends at the next
// shell operator or the end of its line; a line ending in a backslash goes
// on on the next. Shell comments are dropped.
func docUsages(file, doc string) []docUsage {
	var out []docUsage
	inBlock := false
	var pending string
	pendingLine := 0
	sc := bufio.NewScanner(strings.NewReader(doc))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if fence := strings.TrimSpace(line); strings.HasPrefix(fence, "```") {
			inBlock, pending = !inBlock, ""
			continue
		}
		if !inBlock {
			continue
		}
		if pending == "" {
			pendingLine = n
		}
		if strings.HasSuffix(line, `\`) {
			pending += strings.TrimSuffix(line, `\`) + " "
			continue
		}
		words := shellWords(pending + line)
		pending = ""
		for _, cmd := range splitCommands(words) {
			if len(cmd) > 0 && (cmd[0] == "flotilla" || strings.HasSuffix(cmd[0], "/flotilla")) {
				out = append(out, docUsage{where: fmt.Sprintf("%s:%d", file, pendingLine), words: cmd[1:]})
			}
		}
	}
	return out
}

// shellOperators end one command and may start another.
var shellOperators = map[string]bool{"|": true, "||": true, "&&": true, ";": true, "&": true, "$(": true, "(": true, ")": true}

// splitCommands cuts a line's words into commands at shell operators,
// dropping the words of a redirection and those after it.
func splitCommands(words []string) [][]string {
	var cmds [][]string
	var cur []string
	ended := false
	for _, w := range words {
		switch {
		case shellOperators[w]:
			cmds, cur, ended = append(cmds, cur), nil, false
		case strings.HasPrefix(w, ">") || strings.HasPrefix(w, "2>"):
			ended = true
		case !ended:
			cur = append(cur, w)
		}
	}
	return append(cmds, cur)
}

// shellWords splits a line into words as a POSIX shell would, well enough
// for documentation: single and double quotes group, a backslash escapes
// one character, an unquoted # starting a word begins a comment, and the
// operators of shellOperators are words of their own.
func shellWords(line string) []string {
	var words []string
	var w strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, w.String())
		}
		w.Reset()
		inWord = false
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !inWord:
			flush()
			return words
		case c == '\'' || c == '"':
			inWord = true
			end := strings.IndexByte(line[i+1:], c)
			if end < 0 {
				end = len(line) - i - 1
			}
			w.WriteString(line[i+1 : i+1+end])
			i += end + 1
		case c == '\\' && i+1 < len(line):
			inWord = true
			i++
			w.WriteByte(line[i])
		case c == '$' && i+1 < len(line) && line[i+1] == '(':
			flush()
			words = append(words, "$(")
			i++
		case c == '|' || c == '&' || c == ';' || c == '(' || c == ')':
			flush()
			op := string(c)
			if i+1 < len(line) && (c == '|' || c == '&') && line[i+1] == c {
				op += string(c)
				i++
			}
			words = append(words, op)
		default:
			inWord = true
			w.WriteByte(c)
		}
	}
	flush()
	return words
}

// placeholder matches the stand-ins the docs use for values: <name>, and
// the ellipsis.
var placeholder = regexp.MustCompile(`^(<[^>]*>|\.\.\.|…)$`)

// checkUsage walks words (a command line after "flotilla") down root's
// command tree: the leading positional words must name commands while the
// command reached has subcommands, and every flag before a bare "--" must
// exist on the command reached or be inherited by it. Values of flags that
// take one are skipped; other positional words are arguments.
func checkUsage(root *cobra.Command, words []string) error {
	cmd := root
	descending := true
	for i := 0; i < len(words); i++ {
		w := strings.Trim(words[i], "[]")
		if w == "--" {
			return nil
		}
		if w == "" || placeholder.MatchString(w) {
			continue
		}
		if cmd.DisableFlagParsing {
			return nil // the words are the wrapped component's own
		}
		if !strings.HasPrefix(w, "-") || w == "-" {
			if descending && cmd.HasSubCommands() {
				sub := findSubcommand(cmd, w)
				if sub == nil {
					return fmt.Errorf("unknown command %q for %q", w, cmd.CommandPath())
				}
				cmd = sub
				continue
			}
			descending = false
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if name == "" {
			return fmt.Errorf("malformed flag %q", w)
		}
		var f *pflag.Flag
		if strings.HasPrefix(w, "--") {
			f = lookupFlag(cmd, name)
		} else {
			// -n, -n=x or -nVALUE: cobra reads the first letter as the
			// shorthand; component-base's -v is a one-letter long name.
			if f = lookupShorthand(cmd, name[:1]); f == nil {
				f = lookupFlag(cmd, name)
			}
			hasValue = hasValue || (f != nil && f.NoOptDefVal == "" && len(name) > 1)
		}
		if f == nil {
			if name == "help" || name == "h" {
				continue // cobra adds --help to every command as it runs
			}
			return fmt.Errorf("unknown flag %s for %q", strings.SplitN(w, "=", 2)[0], cmd.CommandPath())
		}
		if !hasValue && f.NoOptDefVal == "" {
			i++ // the flag's value
		}
	}
	return nil
}

func findSubcommand(cmd *cobra.Command, name string) *cobra.Command {
	for _, sub := range cmd.Commands() {
		if sub.Name() == name || sub.HasAlias(name) {
			return sub
		}
	}
	return nil
}

func lookupFlag(cmd *cobra.Command, name string) *pflag.Flag {
	if f := cmd.Flags().Lookup(name); f != nil {
		return f
	}
	return cmd.InheritedFlags().Lookup(name)
}

func lookupShorthand(cmd *cobra.Command, s string) *pflag.Flag {
	if f := cmd.Flags().ShorthandLookup(s); f != nil {
		return f
	}
	return cmd.InheritedFlags().ShorthandLookup(s)
}
