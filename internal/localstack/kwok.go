package localstack

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	nodefast "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	nodeheartbeat "sigs.k8s.io/kwok/kustomize/stage/node/heartbeat-with-lease"
	podfast "sigs.k8s.io/kwok/kustomize/stage/pod/fast"
	kwokv1alpha1 "sigs.k8s.io/kwok/pkg/apis/v1alpha1"
	"sigs.k8s.io/yaml"
)

// kwokStages returns the kwok Stage documents the members simulate nodes and
// pods with, as one multi-document YAML: nodes become Ready and renew their
// leases; pods get an IP, become Running and Ready, complete when they are
// Job pods, and go away when deleted. These are kwok's own "fast" stages,
// shipped in the kwok module.
func kwokStages() string {
	return strings.Join([]string{
		nodefast.DefaultNodeInit,
		nodeheartbeat.DefaultNodeHeartbeatWithLease,
		podfast.DefaultPodReady,
		podfast.DefaultPodComplete,
		podfast.DefaultPodDelete,
	}, "\n---\n")
}

// KwokLogsFile and KwokExecDir, under the data directory, are what every
// simulated container's logs read and where a command exec'd into it runs.
const (
	KwokLogsFile = "kwok-container.log"
	KwokExecDir  = "kwok-exec"
)

// writeKwokConfig writes kwok's --config file for the members: the stages of
// kwokStages, then a ClusterLogs and a ClusterExec that make every simulated
// container answer `kubectl logs` (the lines of dataDir/KwokLogsFile, in the
// CRI log format kubelet writes) and `kubectl exec` (the command runs on this
// machine, as the user who ran `flotilla up`, in dataDir/KwokExecDir). Errors
// name the file that could not be written.
func writeKwokConfig(path, dataDir string) error {
	logs := filepath.Join(dataDir, KwokLogsFile)
	execDir := filepath.Join(dataDir, KwokExecDir)
	now := time.Now().UTC().Format(time.RFC3339Nano)
	lines := fmt.Sprintf("%[1]s stdout F simulated container started by kwok for flotilla up\n%[1]s stdout F this is the log every simulated container serves (%[2]s)\n", now, logs)
	if err := os.WriteFile(logs, []byte(lines), 0o600); err != nil {
		return fmt.Errorf("write the simulated containers' log: %w", err)
	}
	if err := os.MkdirAll(execDir, 0o700); err != nil {
		return fmt.Errorf("create the simulated containers' exec directory: %w", err)
	}
	follow := true
	docs := []any{
		kwokv1alpha1.ClusterLogs{
			TypeMeta:   metav1.TypeMeta{APIVersion: kwokv1alpha1.GroupVersion.String(), Kind: kwokv1alpha1.ClusterLogsKind},
			ObjectMeta: metav1.ObjectMeta{Name: "flotilla-container-logs"},
			Spec:       kwokv1alpha1.ClusterLogsSpec{Logs: []kwokv1alpha1.Log{{LogsFile: &logs, Follow: &follow}}},
		},
		kwokv1alpha1.ClusterExec{
			TypeMeta:   metav1.TypeMeta{APIVersion: kwokv1alpha1.GroupVersion.String(), Kind: kwokv1alpha1.ClusterExecKind},
			ObjectMeta: metav1.ObjectMeta{Name: "flotilla-container-exec"},
			Spec:       kwokv1alpha1.ClusterExecSpec{Execs: []kwokv1alpha1.ExecTarget{{Local: &kwokv1alpha1.ExecTargetLocal{WorkDir: execDir}}}},
		},
	}
	all := []string{kwokStages()}
	for _, d := range docs {
		b, err := yaml.Marshal(d)
		if err != nil {
			return err
		}
		all = append(all, string(b))
	}
	if err := os.WriteFile(path, []byte(strings.Join(all, "\n---\n")), 0o600); err != nil {
		return fmt.Errorf("write kwok's configuration %s: %w", path, err)
	}
	return nil
}
