package localstack

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/kwok/pkg/apis/internalversion"
	kwokconfig "sigs.k8s.io/kwok/pkg/config"
)

// TestKwokConfigServesLogsAndExec loads the members' kwok configuration with
// kwok's own loader: the stages, and one ClusterLogs and one ClusterExec for
// every container, whose log file and exec directory exist.
func TestKwokConfigServesLogsAndExec(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "kwok.yaml")
	if err := writeKwokConfig(path, dir); err != nil {
		t.Fatal(err)
	}
	objs, err := kwokconfig.Load(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(kwokconfig.FilterWithType[*internalversion.Stage](objs)); n != 5 {
		t.Errorf("%d stages, want 5", n)
	}
	logs := kwokconfig.FilterWithType[*internalversion.ClusterLogs](objs)
	if len(logs) != 1 || len(logs[0].Spec.Logs) != 1 || logs[0].Spec.Logs[0].LogsFile == "" || len(logs[0].Spec.Logs[0].Containers) != 0 {
		t.Fatalf("ClusterLogs %+v, want one for every container", logs)
	}
	if _, err := os.Stat(logs[0].Spec.Logs[0].LogsFile); err != nil {
		t.Error(err)
	}
	execs := kwokconfig.FilterWithType[*internalversion.ClusterExec](objs)
	if len(execs) != 1 || len(execs[0].Spec.Execs) != 1 || execs[0].Spec.Execs[0].Local == nil {
		t.Fatalf("ClusterExec %+v, want one local exec for every container", execs)
	}
	if fi, err := os.Stat(execs[0].Spec.Execs[0].Local.WorkDir); err != nil || !fi.IsDir() {
		t.Errorf("exec directory: %v", err)
	}
}
