package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/internal/member/register"
)

func TestTokenListPrintsAKubectlStyleTable(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	soon, past := now.Add(23*time.Hour), now.Add(-time.Hour)
	var out bytes.Buffer
	printTokens(&out, []register.Token{
		{Token: "abcdef.0123456789abcdef", Expires: &soon, Usages: []string{"authentication", "signing"}, ExtraGroups: []string{register.BootstrapGroup}, Description: "member4"},
		{Token: "ghijkl.0123456789abcdef", Expires: &past},
		{Token: "mnopqr.0123456789abcdef", Usages: []string{"signing"}},
	}, now)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("want a header and 3 rows:\n%s", out.String())
	}
	for i, want := range [][]string{
		{"TOKEN", "TTL", "EXPIRES", "USAGES", "DESCRIPTION", "EXTRA GROUPS"},
		{"abcdef.0123456789abcdef", "23h", "2026-01-01T23:00:00Z", "authentication,signing", "member4", register.BootstrapGroup},
		{"ghijkl.0123456789abcdef", "<expired>", "<none>"},
		{"mnopqr.0123456789abcdef", "<forever>", "<never>", "signing"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("line %d %q lacks %q", i, lines[i], w)
			}
		}
	}
}

func TestRegisterRefusesBadArgumentsBeforeContactingAnything(t *testing.T) {
	member := filepath.Join(t.TempDir(), "member.kubeconfig")
	if err := os.WriteFile(member, []byte(`apiVersion: v1
kind: Config
clusters: [{name: m, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: m, user: {token: x}}]
contexts: [{name: m, context: {cluster: m, user: m}}]
current-context: m
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no control plane": {[]string{"register", "--token", "abcdef.0123456789abcdef", "--cluster-name", "m"}, "takes the control plane's address"},
		"no cluster name":  {[]string{"register", "1.2.3.4:6443", "--token", "abcdef.0123456789abcdef"}, "--cluster-name is required"},
		"a bad cluster name": {[]string{"register", "1.2.3.4:6443", "--token", "abcdef.0123456789abcdef", "--cluster-name", "Not_A_Label",
			"--discovery-token-unsafe-skip-ca-verification"}, "--cluster-name: cluster name \"Not_A_Label\" is invalid"},
		"no token": {[]string{"register", "1.2.3.4:6443", "--cluster-name", "m"}, "--token is required"},
		"no CA hash": {[]string{"register", "1.2.3.4:6443", "--token", "abcdef.0123456789abcdef", "--cluster-name", "m", "--kubeconfig", member},
			"--discovery-token-unsafe-skip-ca-verification"},
		"a negative token TTL":   {[]string{"token", "create", "--ttl", "-1h"}, "--ttl must be positive"},
		"delete without a token": {[]string{"token", "delete"}, "takes a token or a token id"},
	} {
		t.Run(name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := execute(NewRootCommand(), tc.args, &stderr); code != 1 || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("exit code %d, stderr %q; want 1 and %q", code, stderr.String(), tc.want)
			}
		})
	}
}
