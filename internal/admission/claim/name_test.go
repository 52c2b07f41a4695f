package claim

import (
	"testing"

	"github.com/flotilla-io/flotilla/internal/localstack"
)

// TestLocalStackNamesThisPlugin keeps the name `flotilla up` uses to turn the
// plugin off (--fast-path-admission-claim=false) in step with the plugin.
func TestLocalStackNamesThisPlugin(t *testing.T) {
	if localstack.AdmissionClaimPlugin != PluginName {
		t.Errorf("localstack.AdmissionClaimPlugin = %q, want %q", localstack.AdmissionClaimPlugin, PluginName)
	}
}
