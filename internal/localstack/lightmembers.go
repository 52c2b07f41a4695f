package localstack

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// PauseLightMember makes light member name of the stack in dataDir
// unreachable (pause true), as if its API server process had stopped:
// its open connections close and new ones get no answer. With pause false
// it serves again. The member's data and the other members are untouched.
// Errors: the stack has no light members, the member is not one of them,
// or the host does not answer.
func PauseLightMember(ctx context.Context, dataDir, name string, pause bool) error {
	ports, err := LoadRecordedPorts(dataDir)
	if err != nil {
		return err
	}
	port, ok := ports.recorded[LightMembersName+"/health"]
	if !ok {
		return fmt.Errorf("the stack in %s has no light members (start it with --light-members)", dataDir)
	}
	// The stack's admin credentials, as `up` checks health with.
	cfg, err := RESTConfig((&Plan{DataDir: dataDir}).KarmadaKubeconfig(), ControlPlaneContext)
	if err != nil {
		return err
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	hc.Timeout = 10 * time.Second
	action := "resume"
	if pause {
		action = "pause"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("https://127.0.0.1:%d/members/%s/%s", port, name, action), nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", action, name, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s", action, name, strings.TrimSpace(string(body)))
	}
	return nil
}
