package testbed

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"
)

// HelmRelease describes a Flux HelmRelease (helm.toolkit.fluxcd.io/v2) that installs the chart
// published as the OCIRepository Chart (default: Name) of its own namespace. Zero fields are
// left out, so helm-controller's defaults apply.
type HelmRelease struct {
	Name      string
	Namespace string
	// Chart is the OCIRepository the chartRef names; empty means Name.
	Chart string
	// ChartKind is the kind the chartRef names: OCIRepository (the default) or HelmChart
	// (published with PublishHelmChart); ChartNamespace its namespace, when not the
	// HelmRelease's.
	ChartKind      string
	ChartNamespace string
	// GitChart, when set, is a chart in a Git repository (spec.chart): source-controller
	// builds it into the HelmChart <namespace>-<name>, and ChartKind and Chart do not apply.
	GitChart *GitChart
	// TargetNamespace is spec.targetNamespace; empty releases into Namespace.
	TargetNamespace string
	// Interval is spec.interval; empty means 10m.
	Interval string
	// Timeout is spec.timeout, how long Helm waits for the release's objects, e.g. "10s".
	Timeout string
	// Values is spec.values.
	Values map[string]any
	// ValuesFrom are ConfigMaps in the HelmRelease's namespace whose values.yaml key
	// spec.valuesFrom composes before Values.
	ValuesFrom []string
	Suspend    bool
	// Install and Upgrade set spec.install.remediation and spec.upgrade.remediation.
	Install *Remediation
	Upgrade *Remediation
	// Test sets spec.test.enable: Helm runs the chart's test hooks after a release.
	Test bool
	// DisableWait sets spec.install.disableWait and spec.upgrade.disableWait: Helm returns as
	// soon as it has applied the chart, without waiting for its workloads.
	DisableWait bool
	// HealthCheckExprs are spec.healthCheckExprs: CEL health checks per kind, which Helm's
	// wait evaluates from helm-controller v1.5.0 on.
	HealthCheckExprs []map[string]any
}

// GitChart is a chart helm-controller takes from a GitRepository through a HelmChart it
// generates (spec.chart.spec).
type GitChart struct {
	// Source is the GitRepository in the HelmRelease's namespace; Path the chart's folder.
	Source string
	Path   string
	// ReconcileStrategy is Revision (a new chart version, VERSION+<commit's 12 hex>, for every
	// commit) or ChartVersion (a new chart only when Chart.yaml's version changes, the default).
	ReconcileStrategy string
	// Interval is how often the HelmChart is built again; empty means 10m.
	Interval string
}

// Remediation is what helm-controller does when an install or upgrade fails.
type Remediation struct {
	// Retries is how many times helm-controller retries the action after a failure.
	Retries int
	// RemediateLastFailure remediates (rolls back or uninstalls) after the last retry too;
	// nil leaves helm-controller's default (true when Retries > 0).
	RemediateLastFailure *bool
	// Strategy is "rollback" or "uninstall"; upgrades only (an install is always uninstalled).
	Strategy string
}

func (r *Remediation) manifest(upgrade bool) map[string]any {
	m := map[string]any{"retries": int64(r.Retries)}
	if r.RemediateLastFailure != nil {
		m["remediateLastFailure"] = *r.RemediateLastFailure
	}
	if upgrade && r.Strategy != "" {
		m["strategy"] = r.Strategy
	}
	return map[string]any{"remediation": m}
}

func (h HelmRelease) chart() string {
	if h.Chart != "" {
		return h.Chart
	}
	return h.Name
}

// Manifest renders the HelmRelease. Its namespace is left out when Namespace is empty, for a
// Kustomization to set.
func (h HelmRelease) Manifest() *unstructured.Unstructured {
	interval := h.Interval
	if interval == "" {
		interval = "10m"
	}
	chartRef := map[string]any{"kind": cmp.Or(h.ChartKind, "OCIRepository"), "name": h.chart()}
	if h.ChartNamespace != "" {
		chartRef["namespace"] = h.ChartNamespace
	}
	spec := map[string]any{"interval": interval, "chartRef": chartRef}
	if g := h.GitChart; g != nil {
		delete(spec, "chartRef")
		chart := map[string]any{
			"chart":     g.Path,
			"sourceRef": map[string]any{"kind": "GitRepository", "name": g.Source},
			"interval":  cmp.Or(g.Interval, "10m"),
		}
		if g.ReconcileStrategy != "" {
			chart["reconcileStrategy"] = g.ReconcileStrategy
		}
		spec["chart"] = map[string]any{"spec": chart}
	}
	if h.TargetNamespace != "" {
		spec["targetNamespace"] = h.TargetNamespace
	}
	if h.Timeout != "" {
		spec["timeout"] = h.Timeout
	}
	if h.Suspend {
		spec["suspend"] = true
	}
	if len(h.Values) > 0 {
		spec["values"] = h.Values
	}
	for _, cm := range h.ValuesFrom {
		from, _ := spec["valuesFrom"].([]any)
		spec["valuesFrom"] = append(from, map[string]any{"kind": "ConfigMap", "name": cm})
	}
	install, upgrade := map[string]any{}, map[string]any{}
	if h.Install != nil {
		install = h.Install.manifest(false)
	}
	if h.Upgrade != nil {
		upgrade = h.Upgrade.manifest(true)
	}
	if h.DisableWait {
		install["disableWait"], upgrade["disableWait"] = true, true
	}
	if len(install) > 0 {
		spec["install"] = install
	}
	if len(upgrade) > 0 {
		spec["upgrade"] = upgrade
	}
	if h.Test {
		spec["test"] = map[string]any{"enable": true}
	}
	if len(h.HealthCheckExprs) > 0 {
		exprs := make([]any, len(h.HealthCheckExprs))
		for i, e := range h.HealthCheckExprs {
			exprs[i] = e
		}
		spec["healthCheckExprs"] = exprs
	}
	md := map[string]any{"name": h.Name}
	if h.Namespace != "" {
		md["namespace"] = h.Namespace
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "helm.toolkit.fluxcd.io/v2",
		"kind":       "HelmRelease",
		"metadata":   md,
		"spec":       spec,
	}}
}

// DeployChart publishes the chart in chartDir as version (its Chart.yaml's version rewritten,
// as helm-controller requires the OCI tag and the chart version to agree) to the OCIRepository
// the HelmRelease names, then applies the HelmRelease, creating its namespaces. It returns the
// published artifact; helm-controller installs or upgrades asynchronously.
//
// The new chart and the new spec (values, remediation) take effect together, in one Helm
// upgrade: an existing HelmRelease is suspended while the chart is published, or else
// helm-controller would first upgrade to the new chart with the old values.
func (c *Cluster) DeployChart(ctx context.Context, hr HelmRelease, chartDir, version string) (Artifact, error) {
	for _, ns := range []string{hr.Namespace, hr.TargetNamespace} {
		if ns == "" {
			continue
		}
		if err := c.EnsureNamespace(ctx, ns); err != nil {
			return Artifact{}, err
		}
	}
	if _, err := c.Dynamic.Resource(HelmReleaseGVR).Namespace(hr.Namespace).Get(ctx, hr.Name, metav1.GetOptions{}); err == nil && !hr.Suspend {
		suspended := hr
		suspended.Suspend = true
		if err := c.ApplyObject(ctx, hr.Namespace, suspended.Manifest()); err != nil {
			return Artifact{}, err
		}
	}
	art, err := c.PublishChartVersion(ctx, hr.Namespace, hr.chart(), chartDir, version)
	if err != nil {
		return Artifact{}, err
	}
	if err := c.ApplyObject(ctx, hr.Namespace, hr.Manifest()); err != nil {
		return Artifact{}, err
	}
	return art, nil
}

// PublishChartVersion publishes the chart in chartDir as version of the OCIRepository ns/name,
// like PublishChart, after rewriting a copy of the chart to that version.
func (c *Cluster) PublishChartVersion(ctx context.Context, ns, name, chartDir, version string) (Artifact, error) {
	tmp, err := os.MkdirTemp("", "testbed-chart-")
	if err != nil {
		return Artifact{}, fmt.Errorf("testbed: copy chart: %w", err)
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, filepath.Base(chartDir))
	if err := copyChart(chartDir, dir, version); err != nil {
		return Artifact{}, err
	}
	return c.PublishChart(ctx, ns, name, dir, version)
}

// copyChart copies the chart in src to dst with Chart.yaml's version set to version.
func copyChart(src, dst, version string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("testbed: copy chart: %w", err)
		}
		if rel == "Chart.yaml" {
			var meta map[string]any
			if err := yaml.Unmarshal(data, &meta); err != nil {
				return fmt.Errorf("testbed: read %s: %w", p, err)
			}
			meta["version"] = version
			if data, err = yaml.Marshal(meta); err != nil {
				return fmt.Errorf("testbed: write Chart.yaml: %w", err)
			}
		}
		if err := os.WriteFile(target, data, 0o644); err != nil {
			return fmt.Errorf("testbed: copy chart: %w", err)
		}
		return nil
	})
}

// WaitHelmReleased waits until the HelmRelease ns/name is Ready with its newest release deployed
// from chart version version (helm-controller records VERSION+DIGEST12 for OCI charts).
func (c *Cluster) WaitHelmReleased(ctx context.Context, ns, name, version string) error {
	var last *unstructured.Unstructured
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		obj, err := c.Dynamic.Resource(HelmReleaseGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = obj
		history, _, _ := unstructured.NestedSlice(obj.Object, "status", "history")
		if len(history) == 0 {
			return false, nil
		}
		latest, _ := history[0].(map[string]any)
		chartVersion, _ := latest["chartVersion"].(string)
		if latest["status"] != "deployed" || (chartVersion != version && !strings.HasPrefix(chartVersion, version+"+")) {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		for _, cond := range conds {
			m, _ := cond.(map[string]any)
			if m["type"] == "Ready" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("cluster %s: HelmRelease %s/%s did not release chart version %s: %w (status: %v)\n%s",
			c.Name, ns, name, version, err, last, tail(c.ControllerLog("helm-controller"), 20))
	}
	return nil
}
