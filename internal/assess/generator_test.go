package assess

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/fluxhealth"
	"github.com/org/app-status-action/internal/result"
)

// artifactGenerator is source-watcher's ArtifactGenerator name in ns at generation 3, built
// from GitRepository flux-system/app (alias app), its observedSourcesDigest digest, with the
// given conditions (YAML list items).
func artifactGenerator(name, ns, digest string, conditions ...string) string {
	doc := fmt.Sprintf(`apiVersion: source.extensions.fluxcd.io/v1beta1
kind: ArtifactGenerator
metadata: {name: %s, namespace: %s, generation: 3}
spec:
  sources: [{alias: app, kind: GitRepository, name: app, namespace: flux-system}]
  artifacts: [{name: %s, revision: "@app", copy: [{from: "@app/deploy/**", to: "@artifact/"}]}]
status:
  observedSourcesDigest: "%s"
  conditions:`, name, ns, name, digest)
	for _, c := range conditions {
		doc += "\n  - " + c
	}
	return doc
}

// disabledGenerator is generator doc with source-watcher's reconcile: disabled annotation.
func disabledGenerator(doc string) string {
	return strings.Replace(doc, "generation: 3}", "generation: 3, annotations: {source.extensions.fluxcd.io/reconcile: disabled}}", 1)
}

// stalledConditions are the conditions of an ArtifactGenerator source-watcher stalled on: an
// invalid path pattern, at generation 3.
var stalledConditions = []string{`{type: Ready, status: "False", reason: ValidationFailed, message: "invalid path pattern", observedGeneration: 3}`,
	`{type: Stalled, status: "True", reason: ValidationFailed, message: "invalid path pattern", observedGeneration: 3}`}

// fleetAt is the fleet repository's current artifact in the applier chains' fixtures.
const fleetAt = "main@sha1:fffffffffffffffffffffffffffffffffffffff1"

// atWorkOnFleet is Kustomization name of the GitRepository fleet at work on fleetAt, the fleet
// repository's current artifact, having applied ...f0 before.
func atWorkOnFleet(name string) string {
	rev := fleetAt
	return strings.NewReplacer(
		`lastAppliedRevision: "`+rev+`"`, `lastAppliedRevision: "main@sha1:fffffffffffffffffffffffffffffffffffffff0"`,
		`{type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: `+rev+`", observedGeneration: 2}`,
		`{type: Ready, status: "Unknown", reason: Progressing, message: "Reconciliation in progress", observedGeneration: 2}`+"\n"+
			`  - {type: Reconciling, status: "True", reason: Progressing, message: "Reconciliation in progress", observedGeneration: 2}`,
	).Replace(ks(name, "GitRepository", "fleet", "", rev))
}

// generatorReady is an ArtifactGenerator's Ready=True at its generation.
const generatorReady = `{type: Ready, status: "True", reason: Succeeded, message: "reconciliation succeeded, generated 1 artifact(s)", observedGeneration: 3, lastTransitionTime: "2026-11-01T11:50:00Z"}`

// digestOf is the observedSourcesDigest of a generator built from GitRepository app's
// artifact rev (gitRepoStored).
func digestOf(rev string) string {
	return flux.ObservedSourcesDigest(map[string]flux.ObservedSource{"app": {Digest: "sha256:" + dig1, Revision: rev, URL: "http://source-controller/gitrepository/flux-system/app/" + rev[len(rev)-12:] + ".tar.gz"}})
}

// builtFromGitRepo is the observedSourcesDigest of a generator built from gitRepo()'s artifact.
var builtFromGitRepo = flux.ObservedSourcesDigest(map[string]flux.ObservedSource{"app": {Revision: revB}})

// gitRepoStored is GitRepository flux-system/app serving rev, stored at 11:55.
func gitRepoStored(rev string) string {
	return `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: app, namespace: flux-system, generation: 1}
status:
  observedGeneration: 1
  artifact: {revision: "` + rev + `", digest: "sha256:` + dig1 + `", url: "http://source-controller/gitrepository/flux-system/app/` + rev[len(rev)-12:] + `.tar.gz", lastUpdateTime: "2026-11-01T11:55:00Z"}
  conditions: [{type: Ready, status: "True", reason: Succeeded}]`
}

// TestExternalArtifactOfItsGenerator: an ExternalArtifact holds what its ArtifactGenerator
// last built, Ready, until the generator builds again; source-watcher builds only when it
// reconciles, and records the digest of the sources it built from only when the build
// succeeds (observedSourcesDigest). A nested Kustomization of it, on its artifact, is
// Current only once the generator built from its sources' current artifacts: the root on B,
// the artifact of commit A, waits; a generator that fails to build B fails.
func TestExternalArtifactOfItsGenerator(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	root := ks("app", "GitRepository", "app", "", revB, "flux-system_gen_kustomize.toolkit.fluxcd.io_Kustomization")
	on := func(rev string, generator string) []string {
		return []string{root, gitRepoStored(revB), ks("gen", "ExternalArtifact", "gen", "", rev), externalArtifact("gen", "flux-system", rev), generator}
	}
	reconciling := `{type: Reconciling, status: "True", reason: Progressing, message: Reconciliation in progress, observedGeneration: 3}`
	buildFailed := func(at string) string {
		return `{type: Ready, status: "False", reason: BuildFailed, message: "gen build failed: no files matched @app/deploy/**", observedGeneration: 3, lastTransitionTime: "` + at + `"}`
	}
	retrying := `{type: Reconciling, status: "True", reason: ProgressingWithRetry, message: Reconciliation in progress, observedGeneration: 3}`
	waits := outcome{Verdict: result.VerdictInProgress, Reason: "SourceNotReady"}
	runFixtureCases(t, []fixtureCase{
		{name: "the artifact of commit A, the generator's last build of A, its source on B", looks: []fixtureLook{{
			docs: on(revOfA, artifactGenerator("gen", "flux-system", digestOf(revOfA), generatorReady)),
			want: expected{Outcome: waits, Says: []string{"waiting for ArtifactGenerator/flux-system/gen (which writes ExternalArtifact/flux-system/gen, artifact main@sha1:a1b2c3d) to build from its sources' current artifacts (GitRepository/flux-system/app main@sha1:bbbbbbb): its last build was of other artifacts"}}}}},
		{name: "the generator building B", looks: []fixtureLook{{
			docs: on(revOfA, artifactGenerator("gen", "flux-system", digestOf(revOfA),
				`{type: Ready, status: Unknown, reason: Progressing, message: Reconciliation in progress, observedGeneration: 3}`, reconciling)),
			want: expected{Outcome: waits, Says: []string{"waiting for ArtifactGenerator/flux-system/gen", "to build at generation 3: Reconciliation in progress"}}}}},
		{name: "the generator failed to build B", looks: []fixtureLook{{
			docs: on(revOfA, artifactGenerator("gen", "flux-system", digestOf(revOfA), buildFailed("2026-11-01T11:56:00Z"), retrying)),
			want: expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"},
				Says: []string{"ArtifactGenerator/flux-system/gen (which writes ExternalArtifact/flux-system/gen, artifact main@sha1:a1b2c3d) failed to build from its sources' current artifacts: gen build failed: no files matched"}}}}},
		{name: "the generator's failure before its source stored B: a build of B follows", looks: []fixtureLook{{
			docs: on(revOfA, artifactGenerator("gen", "flux-system", digestOf(revOfA), buildFailed("2026-11-01T11:54:59Z"), retrying)),
			want: expected{Outcome: waits, Says: []string{"to build at generation 3: gen build failed"}}}}},
		{name: "the generator stalled", looks: []fixtureLook{{
			docs: on(revOfA, artifactGenerator("gen", "flux-system", digestOf(revOfA),
				`{type: Ready, status: "False", reason: ValidationFailed, message: "invalid path pattern", observedGeneration: 3}`,
				`{type: Stalled, status: "True", reason: ValidationFailed, message: "invalid path pattern", observedGeneration: 3}`)),
			want: expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"}, Says: []string{"stalled: invalid path pattern"}}}}},
		{name: "the generator disabled, its last build of A: it will not build B", looks: []fixtureLook{{
			docs: on(revOfA, disabledGenerator(artifactGenerator("gen", "flux-system", digestOf(revOfA), generatorReady))),
			want: expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"},
				Says: []string{"its reconciliation is disabled (source.extensions.fluxcd.io/reconcile: disabled): it will not"}}}}},
		{name: "the generator disabled, its last build of B", looks: []fixtureLook{{
			docs: on(revB, disabledGenerator(artifactGenerator("gen", "flux-system", digestOf(revB), generatorReady))),
			want: expected{Outcome: current}}}},
		{name: "the generator built B", looks: []fixtureLook{{
			docs: on(revB, artifactGenerator("gen", "flux-system", digestOf(revB), generatorReady)),
			want: expected{Outcome: current}}}},
		{name: "the generator built B, at a generation before its current one", looks: []fixtureLook{{
			docs: on(revB, artifactGenerator("gen", "flux-system", digestOf(revB),
				`{type: Ready, status: "True", reason: Succeeded, message: "reconciliation succeeded", observedGeneration: 2}`)),
			want: expected{Outcome: waits, Says: []string{"to build at generation 3"}}}}},
		{name: "the generator not found", looks: []fixtureLook{{
			docs: on(revB, ""),
			want: expected{Outcome: waits, Says: []string{"waiting for ArtifactGenerator/flux-system/gen, which writes ExternalArtifact/flux-system/gen: not found"}}}}},
		{name: "generators may not be listed: the artifact alone, as before", forbidden: []schema.GroupResource{flux.ArtifactGeneratorGVR.GroupResource()},
			looks: []fixtureLook{{docs: on(revOfA, artifactGenerator("gen", "flux-system", digestOf(revOfA), generatorReady)),
				want: expected{Outcome: current, Flux: map[string]fluxExpected{"Kustomization/flux-system/gen": {Verdict: result.VerdictCurrent,
					Owner: "Kustomization/flux-system/app", Says: "not compared with ArtifactGenerator/flux-system/gen, which writes ExternalArtifact/flux-system/gen: the credentials may not list artifactgenerators"}}}}}},
	})
}

// TestDisabledGeneratorWithoutASourceArtifact: source-watcher returns at once for a generator
// whose reconciliation is disabled (Reconcile, IsDisabled), before it looks at its sources: one
// that has no artifact, or is not found, changes nothing, and the generator builds nothing
// more. The root waiting on its ExternalArtifact for the commit fails at once, as it does when
// each source has an artifact.
func TestDisabledGeneratorWithoutASourceArtifact(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	noArtifact := `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: app, namespace: flux-system, generation: 1}
status:
  observedGeneration: 1
  conditions: [{type: Ready, status: "False", reason: GitOperationFailed, message: "auth failed", observedGeneration: 1}]`
	gen := disabledGenerator(artifactGenerator("gen", "flux-system", digestOf(revOfA), generatorReady))
	docs := func(more ...string) []string {
		return append([]string{ks("app", "ExternalArtifact", "gen", "", revOfA), externalArtifact("gen", "flux-system", revOfA), gen}, more...)
	}
	fails := func(says string) expected {
		return expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"},
			Says: []string{says, "its reconciliation is disabled (source.extensions.fluxcd.io/reconcile: disabled): it will not"}}
	}
	runFixtureCases(t, []fixtureCase{
		{name: "its source on the commit: it fails", looks: []fixtureLook{{docs: docs(gitRepoStored(revB)),
			want: fails("(GitRepository/flux-system/app main@sha1:bbbbbbb)")}}},
		{name: "its source without an artifact: it fails", looks: []fixtureLook{{docs: docs(noArtifact),
			want: fails("(GitRepository/flux-system/app no artifact)")}}},
		{name: "its source not found: it fails", looks: []fixtureLook{{docs: docs(),
			want: fails("(GitRepository/flux-system/app not found)")}}},
	})
}

// TestChainedGenerators: an ArtifactGenerator built from another one's ExternalArtifact is
// current only when that one is current to its own sources: the outer generator built from
// the inner artifact as it stands, and the inner one has not built from commit B yet.
func TestChainedGenerators(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	root := ks("app", "GitRepository", "app", "", revB, "flux-system_outer_kustomize.toolkit.fluxcd.io_Kustomization")
	// link is generator name built from ExternalArtifact from, which held rev then.
	link := func(name, from, rev string) string {
		return `apiVersion: source.extensions.fluxcd.io/v1beta1
kind: ArtifactGenerator
metadata: {name: ` + name + `, namespace: flux-system, generation: 3}
spec:
  sources: [{alias: up, kind: ExternalArtifact, name: ` + from + `}]
  artifacts: [{name: ` + name + `, copy: [{from: "@up/**", to: "@artifact/"}]}]
status:
  observedSourcesDigest: "` + flux.ObservedSourcesDigest(map[string]flux.ObservedSource{"up": {Revision: rev}}) + `"
  conditions:
  - ` + generatorReady
	}
	// chain is the tree on ExternalArtifact outer, written by generator outer, built through
	// links more generators from ExternalArtifact gen, which holds innerRev, written by
	// innerGenerator from the GitRepository.
	chain := func(links int, innerRev, innerGenerator string) []string {
		latest := "latest@sha256:" + dig1
		docs := []string{root, gitRepoStored(revB), ks("outer", "ExternalArtifact", "outer", "", latest), externalArtifact("outer", "flux-system", latest)}
		from := "outer"
		for i := range links {
			next, rev := fmt.Sprintf("mid%d", i), latest
			if i == links-1 {
				next, rev = "gen", innerRev
			}
			docs = append(docs, link(from, next, rev))
			if next != "gen" {
				docs = append(docs, externalArtifact(next, "flux-system", latest))
			}
			from = next
		}
		return append(docs, externalArtifact("gen", "flux-system", innerRev), innerGenerator)
	}
	runFixtureCases(t, []fixtureCase{
		{name: "the inner generator's last build of A, its source on B: the outer waits", looks: []fixtureLook{{
			docs: chain(1, revOfA, artifactGenerator("gen", "flux-system", digestOf(revOfA), generatorReady)),
			want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "SourceNotReady"},
				Says: []string{"ExternalArtifact/flux-system/gen, a source of ArtifactGenerator/flux-system/outer: waiting for ArtifactGenerator/flux-system/gen", "to build from its sources' current artifacts"}}}}},
		{name: "both built from what their sources hold now", looks: []fixtureLook{{
			docs: chain(1, revB, artifactGenerator("gen", "flux-system", digestOf(revB), generatorReady)),
			want: expected{Outcome: current}}}},
		{name: "seven links, the innermost built from A: the outermost waits", looks: []fixtureLook{{
			docs: chain(6, revOfA, artifactGenerator("gen", "flux-system", digestOf(revOfA), generatorReady)),
			want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "SourceNotReady"},
				Says: []string{"ExternalArtifact/flux-system/mid0, a source of ArtifactGenerator/flux-system/outer", "waiting for ArtifactGenerator/flux-system/gen"}}}}},
		{name: "seven links, all current", looks: []fixtureLook{{
			docs: chain(6, revB, artifactGenerator("gen", "flux-system", digestOf(revB), generatorReady)),
			want: expected{Outcome: current}}}},
	})
}

// TestExternalArtifactAfterItsGenerator: the generator writes the ExternalArtifact before it
// records the build in its own status, so a Current rests on an ExternalArtifact read no
// earlier than the generator: one read before may hold the artifact of the build before.
func TestExternalArtifactAfterItsGenerator(t *testing.T) {
	t.Parallel()
	root := ks("app", "GitRepository", "app", "", revB, "flux-system_gen_kustomize.toolkit.fluxcd.io_Kustomization")
	docs := []string{root, gitRepoStored(revB), ks("gen", "ExternalArtifact", "gen", "", revB), externalArtifact("gen", "flux-system", revB),
		artifactGenerator("gen", "flux-system", digestOf(revB), generatorReady)}
	runFixtureCases(t, []fixtureCase{
		{name: "read after it", looks: []fixtureLook{{docs: docs, want: expected{Outcome: current}}}},
		{name: "read before it", reads: []string{"kustomizations", "gitrepositories", "externalartifacts", "artifactgenerators"},
			looks: []fixtureLook{{docs: docs, want: expected{Outcome: confirming}}}},
	})
}

// TestExternalArtifactOfRootOrDependency: a requested Kustomization, or one a Kustomization
// waits for (dependsOn), whose source is an ExternalArtifact that does not serve what it waits
// for is judged by the ArtifactGenerator that writes it, as a nested object's source is: a
// generator stalled, or failed to build from sources one of which serves the expected
// revision, fails it (the revision will not come); one at work holds it, saying so.
func TestExternalArtifactOfRootOrDependency(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	stalled := []string{`{type: Ready, status: "False", reason: ValidationFailed, message: "invalid path pattern", observedGeneration: 3}`,
		`{type: Stalled, status: "True", reason: ValidationFailed, message: "invalid path pattern", observedGeneration: 3}`}
	buildFailed := `{type: Ready, status: "False", reason: BuildFailed, message: "gen build failed: no files matched @app/deploy/**", observedGeneration: 3, lastTransitionTime: "2026-11-01T11:56:00Z"}`
	building := []string{`{type: Ready, status: Unknown, reason: Progressing, message: Reconciliation in progress, observedGeneration: 3}`,
		`{type: Reconciling, status: "True", reason: Progressing, message: Reconciliation in progress, observedGeneration: 3}`}
	// root is the requested Kustomization on ExternalArtifact gen, applied at rev.
	root := func(rev string) string { return ks("app", "ExternalArtifact", "gen", "", rev) }
	// on is root applied at A, the artifact at artifactRev, its generator's source at sourceRev.
	on := func(artifactRev, sourceRev, generator string) []string {
		return []string{root(revOfA), gitRepoStored(sourceRev), externalArtifact("gen", "flux-system", artifactRev), generator}
	}
	sourceStalled := outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"}
	// waits is the root waiting for B, as Flux says, and for the generator, as the message says.
	waits := outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"}
	// dependent is the requested app of the GitRepository, waiting for infra (dependsOn), of
	// ExternalArtifact infra, which holds no artifact yet, written by generator infra.
	dependent := strings.Replace(ks("app", "GitRepository", "app", ", dependsOn: [{name: infra}]", revA), `status: "True", reason: ReconciliationSucceeded`,
		`status: "False", reason: DependencyNotReady`, 1)
	infra := strings.Replace(ks("infra", "ExternalArtifact", "infra", "", revA), `{type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: `+revA+`"`,
		`{type: Ready, status: "False", reason: ArtifactFailed, message: "Source artifact not found, retrying in 30s"`, 1)
	withInfra := func(generator string) []string {
		return []string{dependent, gitRepoStored(revB), infra, externalArtifact("infra", "flux-system", ""), generator}
	}
	runFixtureCases(t, []fixtureCase{
		{name: "root: the generator stalled", looks: []fixtureLook{{
			docs: on(revOfA, revB, artifactGenerator("gen", "flux-system", digestOf(revOfA), stalled...)),
			want: expected{Outcome: sourceStalled, Says: []string{
				"ArtifactGenerator/flux-system/gen (which writes ExternalArtifact/flux-system/gen, artifact main@sha1:a1b2c3d) stalled: invalid path pattern",
				"ExternalArtifact/flux-system/gen serves main@sha1:a1b2c3d, and will not serve main@sha1:bbbbbbb until it builds"}}}}},
		{name: "root: the generator failed to build from its source on B", looks: []fixtureLook{{
			docs: on(revOfA, revB, artifactGenerator("gen", "flux-system", digestOf(revOfA), buildFailed)),
			want: expected{Outcome: sourceStalled, Says: []string{"failed to build from its sources' current artifacts: gen build failed: no files matched"}}}}},
		{name: "root: the generator failed to build from its source still on A: B may build", looks: []fixtureLook{{
			docs: on(revOfA, revOfA, artifactGenerator("gen", "flux-system", digestOf(revOfA), buildFailed)),
			want: expected{Outcome: waits, Says: []string{"to build at generation 3: gen build failed"}}}}},
		{name: "root: the generator building", looks: []fixtureLook{{
			docs: on(revOfA, revB, artifactGenerator("gen", "flux-system", digestOf(revOfA), building...)),
			want: expected{Outcome: waits, Says: []string{"waiting for ArtifactGenerator/flux-system/gen", "to build at generation 3"}}}}},
		{name: "root: the generator built B, the artifact of B applied", looks: []fixtureLook{{
			docs: []string{root(revB), gitRepoStored(revB), externalArtifact("gen", "flux-system", revB), artifactGenerator("gen", "flux-system", digestOf(revB), generatorReady)},
			want: expected{Outcome: current}}}},
		{name: "dependsOn: the generator of its artifact stalled", looks: []fixtureLook{{
			docs: withInfra(artifactGenerator("infra", "flux-system", digestOf(revOfA), stalled...)),
			want: expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxDependencyFailed, Reason: "SourceStalled"}, Says: []string{
				"Kustomization/flux-system/app: waits for Kustomization/flux-system/infra (dependsOn), which failed: ArtifactGenerator/flux-system/infra",
				"stalled: invalid path pattern; ExternalArtifact/flux-system/infra has no artifact"}}}}},
		{name: "dependsOn: the generator of its artifact building", looks: []fixtureLook{{
			docs: withInfra(artifactGenerator("infra", "flux-system", digestOf(revOfA), building...)),
			want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Code: result.CodeFluxDependencyNotReady, Reason: "DependencyNotReady"}}}}},
		{name: "dependsOn: Ready on the artifact of B its generator built", looks: []fixtureLook{{
			docs: []string{dependent, gitRepoStored(revB), ks("infra", "ExternalArtifact", "infra", "", revB), externalArtifact("infra", "flux-system", revB),
				artifactGenerator("infra", "flux-system", digestOf(revB), generatorReady)},
			want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Code: result.CodeFluxDependencyNotReady, Reason: "DependencyNotReady"}}}}},
	})
}

// appliedBy is generator doc labelled by the Flux object that applies it: group's owner
// labels (kustomize.toolkit.fluxcd.io, helm.toolkit.fluxcd.io) naming flux-system/name.
func appliedBy(doc, group, name string) string {
	return strings.Replace(doc, "generation: 3", "generation: 3, labels: {"+group+"/name: "+name+", "+group+"/namespace: flux-system}", 1)
}

// TestStalledGeneratorFixOnItsWay: the ArtifactGenerator of a requested Kustomization's
// ExternalArtifact is applied from Git by another Flux object (its owner labels), so a
// commit that fixes its spec reaches it only through that applier: its stall or failed build
// fails the root only once the applier has applied its source's current artifact, Ready on
// it or failing only its health checks on it (an applier that waits for the generator fails
// its check on the generator's own stall), and that source, when the generator builds from
// it too, serves the expected revision or has moved past it while the run watched (it will
// not serve it: Flux fetches the newest only). Before, the fix may be on its way, and the
// root waits, saying so; an applier the credentials may not read leaves it waiting too. One
// nothing applies (no owner label) fails at once, and so does one whose applier will apply
// nothing before something other than a commit changes: suspended, failed on its source's
// artifact, or failed in a way it retries past the time a root's such failure is given.
func TestStalledGeneratorFixOnItsWay(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	generator := artifactGenerator("gen", "flux-system", digestOf(revOfA), stalledConditions...)
	// on is the root app on ExternalArtifact gen of A, generator gen (labelled or not), and
	// the GitRepository app on B, with more (an applier).
	on := func(gen string, more ...string) []string {
		return append([]string{ks("app", "ExternalArtifact", "gen", "", revOfA), gitRepoStored(revB), externalArtifact("gen", "flux-system", revOfA), gen}, more...)
	}
	// fluxSystem is Kustomization flux-system of the GitRepository app, which applied rev.
	fluxSystem := func(rev string) string {
		return ks("flux-system", "GitRepository", "app", "", rev, "flux-system_gen_source.extensions.fluxcd.io_ArtifactGenerator@v1beta1")
	}
	byFluxSystem := appliedBy(generator, "kustomize.toolkit.fluxcd.io", "flux-system")
	// healthCheckFailed is fluxSystem with spec.wait, having attempted B and applied it (its
	// generator among what it applied) but failed its health check on the stalled generator
	// at generation gen: lastAppliedRevision stays A, as kustomize-controller leaves it.
	healthCheckFailed := func(gen string) string {
		return strings.NewReplacer(
			`lastAppliedRevision: "`+revB+`"`, `lastAppliedRevision: "`+revOfA+`"`,
			`{type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: `+revB+`", observedGeneration: 2}`,
			`{type: Ready, status: "False", reason: HealthCheckFailed, message: "ArtifactGenerator/flux-system/gen status: 'Failed'", observedGeneration: `+gen+`, lastTransitionTime: "2026-11-01T11:59:30Z"}`,
		).Replace(ks("flux-system", "GitRepository", "app", ", wait: true", revB, "flux-system_gen_source.extensions.fluxcd.io_ArtifactGenerator@v1beta1"))
	}
	// The failure of a reconcile that started at generation 1, stamped 2 by Flux's patch
	// helper when the spec changed meanwhile: observedGeneration still 1.
	stampedCurrent := strings.Replace(healthCheckFailed("2"), "observedGeneration: 2\n", "observedGeneration: 1\n", 1)
	// The same failure, ten minutes old: past the time kustomize-controller takes to try the
	// current generation.
	stampedLongAgo := strings.Replace(stampedCurrent, `lastTransitionTime: "2026-11-01T11:59:30Z"`, `lastTransitionTime: "2026-11-01T11:50:00Z"`, 1)
	const inventory = "flux-system_gen_source.extensions.fluxcd.io_ArtifactGenerator@v1beta1"
	suspendedOnA := ks("flux-system", "GitRepository", "app", ", suspend: true", revOfA, inventory)
	// (kustomize-controller v1.9.5 marks a build failure Ready=False alone, not Stalled.)
	buildFailedOnB := strings.NewReplacer(
		`lastAppliedRevision: "`+revB+`"`, `lastAppliedRevision: "`+revOfA+`"`,
		`{type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: `+revB+`", observedGeneration: 2}`,
		`{type: Ready, status: "False", reason: BuildFailed, message: "kustomize build failed: accumulating resources", observedGeneration: 2}`,
	).Replace(fluxSystem(revB))
	waits := outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"}
	sourceStalled := outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"}
	runFixtureCases(t, []fixtureCase{
		{name: "its applier has not applied B, which its source serves: the fix may be on its way", looks: []fixtureLook{{
			docs: on(byFluxSystem, fluxSystem(revOfA)),
			want: expected{Outcome: waits, Says: []string{"stalled: invalid path pattern; the fix may be on its way: " +
				"Kustomization/flux-system/flux-system, which applies ArtifactGenerator/flux-system/gen, has not applied its source's main@sha1:bbbbbbb yet"}}}}},
		{name: "its applier reconciling B", looks: []fixtureLook{{
			docs: on(byFluxSystem, strings.Replace(fluxSystem(revOfA), `{type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: `+revOfA+`"`,
				`{type: Ready, status: Unknown, reason: Progressing, message: "Reconciliation in progress"`, 1)),
			want: expected{Outcome: waits, Says: []string{"the fix may be on its way: Kustomization/flux-system/flux-system"}}}}},
		{name: "its applier applied B, the generator still stalled: it fails", looks: []fixtureLook{{
			docs: on(byFluxSystem, fluxSystem(revB)),
			want: expected{Outcome: sourceStalled, Says: []string{"ArtifactGenerator/flux-system/gen (which writes ExternalArtifact/flux-system/gen, artifact main@sha1:a1b2c3d) stalled: invalid path pattern; ExternalArtifact/flux-system/gen serves"}}}}},
		{name: "its applier applied B, then its health check failed on the stalled generator: it fails", looks: []fixtureLook{{
			docs: on(byFluxSystem, healthCheckFailed("2")),
			want: expected{Outcome: sourceStalled, Says: []string{"ArtifactGenerator/flux-system/gen (which writes ExternalArtifact/flux-system/gen, artifact main@sha1:a1b2c3d) stalled: invalid path pattern"}}}}},
		{name: "its applier's health check failed at an older generation: its current spec may bring the fix", looks: []fixtureLook{{
			docs: on(byFluxSystem, healthCheckFailed("1")),
			want: expected{Outcome: waits, Says: []string{"the fix may be on its way: Kustomization/flux-system/flux-system, which applies ArtifactGenerator/flux-system/gen, has not applied its source's main@sha1:bbbbbbb yet"}}}}},
		{name: "its applier's health check failed, stamped with the current generation it may not be of: it waits", looks: []fixtureLook{{
			docs: on(byFluxSystem, stampedCurrent),
			want: expected{Outcome: waits, Says: []string{"the fix may be on its way: Kustomization/flux-system/flux-system"}}}}},
		{name: "the same failure, ten minutes old: it fails", looks: []fixtureLook{{
			docs: on(byFluxSystem, stampedLongAgo),
			want: expected{Outcome: sourceStalled, Says: []string{"stalled: invalid path pattern"}}}}},
		{name: "its applier suspended on A: it fails", looks: []fixtureLook{{
			docs: on(byFluxSystem, suspendedOnA),
			want: expected{Outcome: sourceStalled, Says: []string{"stalled: invalid path pattern"}}}}},
		{name: "its applier failed to build B: it fails", looks: []fixtureLook{{
			docs: on(byFluxSystem, buildFailedOnB),
			want: expected{Outcome: sourceStalled, Says: []string{"stalled: invalid path pattern"}}}}},
		{name: "its applier applied A, which its source, the generator's too, still serves: B may fix it", looks: []fixtureLook{{
			docs: []string{ks("app", "ExternalArtifact", "gen", "", revOfA), gitRepoStored(revOfA), externalArtifact("gen", "flux-system", revOfA), byFluxSystem, fluxSystem(revOfA)},
			want: expected{Outcome: waits, Says: []string{"the fix may be on its way: Kustomization/flux-system/flux-system, which applies ArtifactGenerator/flux-system/gen, " +
				"applied main@sha1:a1b2c3d of GitRepository/flux-system/app, a source of ArtifactGenerator/flux-system/gen too, which has not fetched main@sha1:bbbbbbb yet"}}}}},
		{name: "its source, the generator's too, moved from A to C, never B: B will not come, it fails", looks: []fixtureLook{
			{docs: []string{ks("app", "ExternalArtifact", "gen", "", revOfA), gitRepoStored(revOfA), externalArtifact("gen", "flux-system", revOfA), byFluxSystem, fluxSystem(revOfA)},
				want: expected{Outcome: waits, Says: []string{"which has not fetched main@sha1:bbbbbbb yet"}}},
			{docs: []string{ks("app", "ExternalArtifact", "gen", "", revOfA), gitRepoStored(revC), externalArtifact("gen", "flux-system", revOfA), byFluxSystem, fluxSystem(revC)},
				want: expected{Outcome: sourceStalled, Says: []string{"ArtifactGenerator/flux-system/gen (which writes ExternalArtifact/flux-system/gen, artifact main@sha1:a1b2c3d) stalled: invalid path pattern"}}},
		}},
		{name: "its source first seen on C, not B: C may come before B, it waits", looks: []fixtureLook{{
			docs: []string{ks("app", "ExternalArtifact", "gen", "", revOfA), gitRepoStored(revC), externalArtifact("gen", "flux-system", revOfA), byFluxSystem, fluxSystem(revC)},
			want: expected{Outcome: waits, Says: []string{"applied main@sha1:ccccccc of GitRepository/flux-system/app, a source of ArtifactGenerator/flux-system/gen too, which has not fetched main@sha1:bbbbbbb yet"}}}}},
		{name: "its applier of another repository applied what that one serves: it fails", looks: []fixtureLook{{
			docs: []string{ks("app", "ExternalArtifact", "gen", "", revOfA), gitRepoStored(revOfA), externalArtifact("gen", "flux-system", revOfA), byFluxSystem,
				ks("flux-system", "GitRepository", "fleet", "", revOfA), strings.Replace(gitRepoStored(revOfA), "name: app,", "name: fleet,", 1)},
			want: expected{Outcome: sourceStalled, Says: []string{"stalled: invalid path pattern"}}}}},
		{name: "no owner label: nothing applies it, it fails as it did", looks: []fixtureLook{{
			docs: on(generator, fluxSystem(revOfA)),
			want: expected{Outcome: sourceStalled, Says: []string{"stalled: invalid path pattern"}}}}},
		{name: "its applier a HelmRelease the credentials may not list: it waits", forbidden: []schema.GroupResource{flux.KindHelmRelease.GroupVersionResource().GroupResource()},
			looks: []fixtureLook{{docs: on(appliedBy(generator, "helm.toolkit.fluxcd.io", "generators")),
				want: expected{Outcome: waits, Says: []string{"the fix may be on its way: HelmRelease/flux-system/generators applies ArtifactGenerator/flux-system/gen",
					"the credentials may not list helmreleases"}}}}},
		// An applier not found may still be created: it is waited for as a missing object
		// the tree needs is (the not-found grace; `get` decides at once), then nothing
		// applies the generator.
		{name: "its applier not found: it waits out the not-found grace, then fails", looks: []fixtureLook{
			{docs: on(appliedBy(generator, "kustomize.toolkit.fluxcd.io", "gone")),
				want: expected{Outcome: waits, Says: []string{"the fix may be on its way: Kustomization/flux-system/gone, which applies ArtifactGenerator/flux-system/gen, is not found yet"}},
			},
			{at: fixtureNow.Add(30 * time.Minute), docs: on(appliedBy(generator, "kustomize.toolkit.fluxcd.io", "gone")),
				want: expected{Outcome: sourceStalled, Says: []string{"no fix is on its way: Kustomization/flux-system/gone, which applies ArtifactGenerator/flux-system/gen, is not found"}}},
		}},
	})
}

// ownedBy is doc (its metadata in flow style) labelled by the Flux object that applies it:
// group's owner labels (kustomize.toolkit.fluxcd.io, helm.toolkit.fluxcd.io,
// resourceset.fluxcd.controlplane.io) naming ns/name.
func ownedBy(doc, group, ns, name string) string {
	return strings.Replace(doc, "metadata: {", "metadata: {labels: {"+group+"/name: "+name+", "+group+"/namespace: "+ns+"}, ", 1)
}

// TestStalledGeneratorFixUpItsApplierChain: the applier of a stalled ArtifactGenerator done
// with its own source is not the end of the way a fix takes: the fix may change the applier's
// own spec (a HelmRelease's chart or values, a Kustomization's path), which the Flux object
// that applies the applier (its own owner labels) applies from its source in turn. While any
// applier up that chain has not applied its source's current artifact, the root waits, the
// message naming the chain; once each has (or failed only its health checks after applying
// it), the root fails. A loop in the labels ends where it closes. Up the chain, an applier that
// will apply nothing before something other than a commit changes (not found, suspended,
// failed on its source's current artifact, a ResourceSet) ends the walk; one failed in a way
// its controller retries, or maybe on its older generation, holds, as the first applier does;
// a source suspended, or not the one the artifacts take their revision from, is not waited for.
func TestStalledGeneratorFixUpItsApplierChain(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	const kustomizeGroup, helmGroup = "kustomize.toolkit.fluxcd.io", "helm.toolkit.fluxcd.io"
	generator := artifactGenerator("gen", "flux-system", digestOf(revOfA), stalledConditions...)
	// on is the root app on ExternalArtifact gen of A, generator gen applied by the given
	// owner, and the GitRepository app on B, with more (the appliers).
	on := func(gen string, more ...string) []string {
		return append([]string{ks("app", "ExternalArtifact", "gen", "", revOfA), gitRepoStored(revB), externalArtifact("gen", "flux-system", revOfA), gen}, more...)
	}
	byRelease := ownedBy(generator, helmGroup, "shop", "web")
	byApps := ownedBy(generator, kustomizeGroup, "flux-system", "apps")
	// release is HelmRelease shop/web, Ready on the chart its OCIRepository serves, applied by
	// Kustomization flux-system/apps.
	release := []string{ownedBy(helmRelease("OCIRepository", 2, 2, "1.0.0", dig1), kustomizeGroup, "flux-system", "apps"), ociRepo()}
	// apps is Kustomization apps of the GitRepository app, which applied rev, applied by
	// Kustomization parent (none when "").
	apps := func(rev, parent string) string {
		if parent == "" {
			return ks("apps", "GitRepository", "app", "", rev)
		}
		return ownedBy(ks("apps", "GitRepository", "app", "", rev), kustomizeGroup, "flux-system", parent)
	}
	fluxSystem := func(rev string) string { return ks("flux-system", "GitRepository", "app", "", rev) }
	// healthCheckFailed is fluxSystem with spec.wait, having applied B and then failed its
	// health check on the root: lastAppliedRevision stays A, as kustomize-controller leaves it.
	healthCheckFailed := strings.NewReplacer(
		`lastAppliedRevision: "`+revB+`"`, `lastAppliedRevision: "`+revOfA+`"`,
		`{type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: `+revB+`", observedGeneration: 2}`,
		`{type: Ready, status: "False", reason: HealthCheckFailed, message: "Kustomization/flux-system/app status: 'Failed'", observedGeneration: 2}`,
	).Replace(ks("flux-system", "GitRepository", "app", ", wait: true", revB))
	// buildFailedOnB is fluxSystem having failed to build B: kustomize-controller applies
	// nothing of B until another commit.
	buildFailedOnB := strings.NewReplacer(
		`lastAttemptedRevision: "`+revB+`"`, `lastAttemptedRevision: "`+revB+`"`,
		`lastAppliedRevision: "`+revB+`"`, `lastAppliedRevision: "`+revOfA+`"`,
		`{type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: `+revB+`", observedGeneration: 2}`,
		`{type: Ready, status: "False", reason: BuildFailed, message: "kustomize build failed: accumulating resources", observedGeneration: 2}`+"\n"+
			`  - {type: Stalled, status: "True", reason: BuildFailed, message: "kustomize build failed: accumulating resources", observedGeneration: 2}`,
	).Replace(fluxSystem(revB))
	// The top failed on B with a failure kustomize-controller retries (a dry-run against a
	// CRD another Kustomization of B installs): its next attempt applies B, and the fix with it.
	retriedOnB := strings.NewReplacer(
		`lastAppliedRevision: "`+revB+`"`, `lastAppliedRevision: "`+revOfA+`"`,
		`{type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: `+revB+`", observedGeneration: 2}`,
		`{type: Ready, status: "False", reason: ReconciliationFailed, message: "Widget/shop/w dry-run failed: no matches for kind \"Widget\" in version \"example.com/v1\"\nensure CRDs are installed first", observedGeneration: 2, lastTransitionTime: "2026-11-01T11:59:00Z"}`,
	).Replace(fluxSystem(revB))

	// A generator of two sources, the app's and the fleet's; the fleet repository is also
	// flux-system's source; B is a commit of the app's repository, which the fleet's never serves.
	twoSources := strings.Replace(byApps,
		`sources: [{alias: app, kind: GitRepository, name: app, namespace: flux-system}]`,
		`sources: [{alias: app, kind: GitRepository, name: app, namespace: flux-system}, {alias: fleet, kind: GitRepository, name: fleet, namespace: flux-system}]`, 1)
	// The same, with a second artifact that takes its revision from the fleet's.
	twoArtifacts := strings.Replace(twoSources,
		`artifacts: [{name: gen, revision: "@app", copy: [{from: "@app/deploy/**", to: "@artifact/"}]}]`,
		`artifacts: [{name: gen, revision: "@app", copy: [{from: "@app/deploy/**", to: "@artifact/"}]}, {name: config, revision: "@fleet", copy: [{from: "@fleet/config/**", to: "@artifact/"}]}]`, 1)
	const fleetRev = "main@sha1:fffffffffffffffffffffffffffffffffffffff1"
	fleetRepo := strings.Replace(gitRepoStored(fleetRev), "name: app,", "name: fleet,", 1)

	// The top at generation 3 (its spec just changed: the fix may be in it), its health
	// check failure stamped 3 by Flux's patch helper though it may be of generation 2.
	stampedCurrent := strings.NewReplacer(
		`lastAppliedRevision: "`+revB+`"`, `lastAppliedRevision: "`+revOfA+`"`,
		`namespace: flux-system, generation: 2}`, `namespace: flux-system, generation: 3}`,
		`{type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: `+revB+`", observedGeneration: 2}`,
		`{type: Ready, status: "False", reason: HealthCheckFailed, message: "Kustomization/flux-system/app status: 'Failed'", observedGeneration: 3, lastTransitionTime: "2026-11-01T11:59:30Z"}`,
	).Replace(ks("flux-system", "GitRepository", "app", ", wait: true", revB))
	// The same, its failure ten minutes old: past the time kustomize-controller takes to try
	// the current generation.
	stampedLongAgo := strings.Replace(stampedCurrent, `lastTransitionTime: "2026-11-01T11:59:30Z"`, `lastTransitionTime: "2026-11-01T11:50:00Z"`, 1)
	// retriedOnB tried again and failed again after the retry grace.
	retriedAgain := strings.Replace(retriedOnB, `lastTransitionTime: "2026-11-01T11:59:00Z"`, `lastTransitionTime: "2026-11-01T12:02:30Z"`, 1)

	// waitsForInfra is Kustomization name of the GitRepository app, behind it on A, waiting for
	// its dependency infra (spec.dependsOn).
	waitsForInfra := func(name string) string {
		return strings.NewReplacer(
			`lastAppliedRevision: "`+revB+`"`, `lastAppliedRevision: "`+revOfA+`"`,
			`lastAttemptedRevision: "`+revB+`"`, `lastAttemptedRevision: "`+revOfA+`"`,
			`{type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: `+revB+`", observedGeneration: 2}`,
			`{type: Ready, status: "False", reason: DependencyNotReady, message: "dependency 'flux-system/infra' is not ready", observedGeneration: 2}`,
		).Replace(ks(name, "GitRepository", "app", ", dependsOn: [{name: infra}]", revB))
	}
	infraFailed := strings.Replace(buildFailedOnB, "name: flux-system,", "name: infra,", 1)
	infraBehind := ks("infra", "GitRepository", "app", "", revOfA)

	waits := outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"}
	sourceStalled := outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"}
	failsAsItDid := expected{Outcome: sourceStalled, Says: []string{
		"ArtifactGenerator/flux-system/gen (which writes ExternalArtifact/flux-system/gen, artifact main@sha1:a1b2c3d) stalled: invalid path pattern; ExternalArtifact/flux-system/gen serves"}}
	runFixtureCases(t, []fixtureCase{
		{name: "its HelmRelease Ready on its chart, applied by a Kustomization behind its source: the fix may be on its way", looks: []fixtureLook{{
			docs: on(byRelease, append(release, apps(revOfA, ""))...),
			want: expected{Outcome: waits, Says: []string{"stalled: invalid path pattern; the fix may be on its way: " +
				"Kustomization/flux-system/apps, which applies HelmRelease/shop/web, which applies ArtifactGenerator/flux-system/gen, has not applied its source's main@sha1:bbbbbbb yet"}}}}},
		{name: "its HelmRelease Ready on its chart, its Kustomization applied B: it fails", looks: []fixtureLook{{
			docs: on(byRelease, append(release, apps(revB, ""))...),
			want: failsAsItDid}}},
		{name: "its Kustomization applied B, the one that applies it behind: the fix may be on its way", looks: []fixtureLook{{
			docs: on(byApps, apps(revB, "flux-system"), fluxSystem(revOfA)),
			want: expected{Outcome: waits, Says: []string{"the fix may be on its way: " +
				"Kustomization/flux-system/flux-system, which applies Kustomization/flux-system/apps, which applies ArtifactGenerator/flux-system/gen, has not applied its source's main@sha1:bbbbbbb yet"}}}}},
		{name: "both Kustomizations applied B: it fails", looks: []fixtureLook{{
			docs: on(byApps, apps(revB, "flux-system"), fluxSystem(revB)),
			want: failsAsItDid}}},
		{name: "the top applied B, then failed its health checks: it fails", looks: []fixtureLook{{
			docs: on(byApps, apps(revB, "flux-system"), healthCheckFailed),
			want: failsAsItDid}}},
		{name: "a loop in the labels, apps applied by flux-system applied by apps: the walk ends, it fails", looks: []fixtureLook{{
			docs: on(byApps, apps(revB, "flux-system"), ownedBy(fluxSystem(revB), kustomizeGroup, "flux-system", "apps")),
			want: failsAsItDid}}},
		{name: "flux-system applies itself: the walk ends, it fails", looks: []fixtureLook{{
			docs: on(byApps, apps(revB, "flux-system"), ownedBy(fluxSystem(revB), kustomizeGroup, "flux-system", "flux-system")),
			want: failsAsItDid}}},
		{name: "a monorepo, B not fetched yet: its HelmRelease's Kustomization applied A of the generator's own source: the fix may be on its way", looks: []fixtureLook{{
			docs: []string{ks("app", "ExternalArtifact", "gen", "", revOfA), gitRepoStored(revOfA), externalArtifact("gen", "flux-system", revOfA),
				byRelease, ownedBy(helmRelease("OCIRepository", 2, 2, "1.0.0", dig1), kustomizeGroup, "flux-system", "apps"), ociRepo(),
				apps(revOfA, "")},
			want: expected{Outcome: waits, Says: []string{"the fix may be on its way: " +
				"Kustomization/flux-system/apps, which applies HelmRelease/shop/web, which applies ArtifactGenerator/flux-system/gen, applied main@sha1:a1b2c3d of GitRepository/flux-system/app, a source of ArtifactGenerator/flux-system/gen too, which has not fetched main@sha1:bbbbbbb yet"}}}}},
		// Up the chain, an applier that will apply nothing before something other than a commit
		// changes, or whose state cannot be known, ends the walk: a hold on it would last to the
		// deadline.
		{name: "the one that applies its Kustomization not found (another cluster's, or deleted): it waits out the not-found grace, then fails", looks: []fixtureLook{
			{docs: on(byApps, apps(revB, "gone")), want: expected{Outcome: waits, Says: []string{"Kustomization/flux-system/gone, which applies Kustomization/flux-system/apps, which applies ArtifactGenerator/flux-system/gen, is not found yet"}}, get: &failsAsItDid},
			{at: fixtureNow.Add(30 * time.Minute), docs: on(byApps, apps(revB, "gone")), want: failsAsItDid},
		}},
		{name: "the top suspended, behind its source: it fails", looks: []fixtureLook{{
			docs: on(byApps, apps(revB, "flux-system"), ks("flux-system", "GitRepository", "app", ", suspend: true", revOfA)),
			want: failsAsItDid}}},
		{name: "the top failed on its source's current artifact: it fails", looks: []fixtureLook{{
			docs: on(byApps, apps(revB, "flux-system"), buildFailedOnB),
			want: failsAsItDid}}},
		{name: "the top behind its source, working: the fix may be on its way", looks: []fixtureLook{{
			docs: on(byApps, apps(revB, "flux-system"), fluxSystem(revOfA)),
			want: expected{Outcome: waits, Says: []string{"the fix may be on its way: Kustomization/flux-system/flux-system"}}}}},
		{name: "the top waits for a dependency that failed on its source's artifact: it fails", looks: []fixtureLook{{
			docs: on(byApps, apps(revB, "flux-system"), ownedBy(waitsForInfra("flux-system"), kustomizeGroup, "flux-system", "flux-system"), infraFailed),
			want: failsAsItDid}}},
		{name: "the top waits for a dependency still at work: the fix may be on its way", looks: []fixtureLook{{
			docs: on(byApps, apps(revB, "flux-system"), waitsForInfra("flux-system"), infraBehind),
			want: expected{Outcome: waits, Says: []string{"the fix may be on its way: Kustomization/flux-system/flux-system"}}}}},
		{name: "its Kustomization waits for a dependency that failed on its source's artifact: it fails", looks: []fixtureLook{{
			docs: on(byApps, waitsForInfra("apps"), infraFailed),
			want: failsAsItDid}}},
		{name: "its Kustomization waits for a dependency still at work: the fix may be on its way", looks: []fixtureLook{{
			docs: on(byApps, waitsForInfra("apps"), infraBehind),
			want: expected{Outcome: waits, Says: []string{"the fix may be on its way: Kustomization/flux-system/apps"}}}}},
		{name: "its HelmRelease generated by a ResourceSet not found: it waits out the not-found grace, then fails", looks: []fixtureLook{
			{docs: on(byRelease, ownedBy(helmRelease("OCIRepository", 2, 2, "1.0.0", dig1), "resourceset.fluxcd.controlplane.io", "flux-system", "apps"), ociRepo()),
				want: expected{Outcome: waits}},
			{at: fixtureNow.Add(30 * time.Minute), docs: on(byRelease, ownedBy(helmRelease("OCIRepository", 2, 2, "1.0.0", dig1), "resourceset.fluxcd.controlplane.io", "flux-system", "apps"), ociRepo()),
				want: failsAsItDid},
		}},
		// Retried failures, and sources that will not bring the revision.
		{name: "the top's health check failure may be of its older generation: it waits", looks: []fixtureLook{{
			docs: on(byApps, apps(revB, "flux-system"), stampedCurrent),
			want: expected{Outcome: waits}}}},
		{name: "the same at the first level: it waits", looks: []fixtureLook{{
			docs: on(byApps, strings.Replace(stampedCurrent, "name: flux-system,", "name: apps,", 1)),
			want: expected{Outcome: waits}}}},
		{name: "the retried failure at the first level: it waits", looks: []fixtureLook{{
			docs: on(byApps, strings.Replace(retriedOnB, "name: flux-system,", "name: apps,", 1)),
			want: expected{Outcome: waits}}}},
		// The generator's own GitRepository, the top's source, suspended on A: it fetches
		// nothing, B never comes.
		{name: "a monorepo, the shared source suspended on A: it fails", looks: []fixtureLook{{
			docs: []string{ks("app", "ExternalArtifact", "gen", "", revOfA), strings.Replace(gitRepoStored(revOfA), "generation: 1}", "generation: 1}\nspec: {suspend: true}", 1), externalArtifact("gen", "flux-system", revOfA),
				ownedBy(generator, "helm.toolkit.fluxcd.io", "shop", "web"), ownedBy(helmRelease("OCIRepository", 2, 2, "1.0.0", dig1), kustomizeGroup, "flux-system", "apps"), ociRepo(),
				ks("apps", "GitRepository", "app", "", revOfA)},
			want: failsAsItDid}}},
		{name: "the same, suspended, at the first level: it fails", looks: []fixtureLook{{
			docs: []string{ks("app", "ExternalArtifact", "gen", "", revOfA), strings.Replace(gitRepoStored(revOfA), "generation: 1}", "generation: 1}\nspec: {suspend: true}", 1), externalArtifact("gen", "flux-system", revOfA),
				byApps, ks("apps", "GitRepository", "app", "", revOfA)},
			want: failsAsItDid}}},
		{name: "the top failed on B, a failure it retries: it waits", looks: []fixtureLook{{
			docs: on(byApps, apps(revB, "flux-system"), retriedOnB),
			want: expected{Outcome: waits}}}},
		{name: "the top's failure on B stamped with its generation, long ago: it fails", looks: []fixtureLook{{
			docs: on(byApps, apps(revB, "flux-system"), stampedLongAgo),
			want: failsAsItDid}}},
		{name: "the top failed on B, a failure it retries, and again past the retry grace: it fails", looks: []fixtureLook{{
			docs: on(byApps, apps(revB, "flux-system"), retriedOnB),
			want: expected{Outcome: waits}}, {
			at:   fixtureNow.Add(3 * time.Minute),
			docs: on(byApps, apps(revB, "flux-system"), retriedAgain),
			want: failsAsItDid}}},
		{name: "a two-source generator, flux-system on the fleet repo done: it fails", looks: []fixtureLook{{
			docs: on(twoSources, apps(revB, "flux-system"), ks("flux-system", "GitRepository", "fleet", "", fleetRev), fleetRepo),
			want: failsAsItDid}}},
		{name: "a two-source generator, its first applier on the fleet repo done: it fails", looks: []fixtureLook{{
			docs: on(twoSources, ks("apps", "GitRepository", "fleet", "", fleetRev), fleetRepo),
			want: failsAsItDid}}},
		{name: "its other artifact on the fleet repo, its first applier on that repo done: it fails", looks: []fixtureLook{{
			docs: on(twoArtifacts, ks("apps", "GitRepository", "fleet", "", fleetRev), fleetRepo),
			want: failsAsItDid}}},
		{name: "the same, flux-system on the fleet repo done: it fails", looks: []fixtureLook{{
			docs: on(twoArtifacts, apps(revB, "flux-system"), ks("flux-system", "GitRepository", "fleet", "", fleetRev), fleetRepo),
			want: failsAsItDid}}},
	})
}

// TestStalledGeneratorApplierNotStuck: the generator's applier, or one up its chain, that has
// not applied its source's current artifact is stuck (the root fails, saying why no fix comes)
// only when nothing Flux does next may apply the fix: not while its source, one of the
// generator's own, is still to fetch the revision the root waits for (the new artifact
// requeues the applier and its dependencies of that source, kustomize-controller's
// SourceRevisionChangePredicate), nor while its source has no artifact yet, nor while it
// waits for a dependency not found (no object the run was asked about). An applier that waits
// for an object of an artifact of a generator it applies too is Flux waiting on itself: it
// fails, and the run does not follow the loop.
func TestStalledGeneratorApplierNotStuck(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	const kustomizeGroup = "kustomize.toolkit.fluxcd.io"
	const fleetRev = "main@sha1:fffffffffffffffffffffffffffffffffffffff1"
	generator := artifactGenerator("gen", "flux-system", digestOf(revOfA), stalledConditions...)
	byFluxSystem := appliedBy(generator, kustomizeGroup, "flux-system")
	// root is the root app on ExternalArtifact gen of A, the GitRepository app on rev.
	root := func(rev string) []string {
		return []string{ks("app", "ExternalArtifact", "gen", "", revOfA), gitRepoStored(rev), externalArtifact("gen", "flux-system", revOfA)}
	}
	// buildFailedOn is Kustomization name of GitRepository app, having failed to build rev
	// (Ready=False BuildFailed, as kustomize-controller v1.9.5 writes it), on revA before.
	buildFailedOn := func(name, rev string) string {
		return strings.NewReplacer(
			`lastAppliedRevision: "`+rev+`"`, `lastAppliedRevision: "`+revA+`"`,
			`{type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: `+rev+`", observedGeneration: 2}`,
			`{type: Ready, status: "False", reason: BuildFailed, message: "kustomize build failed: accumulating resources", observedGeneration: 2, lastTransitionTime: "2026-11-01T11:58:00Z"}`,
		).Replace(ks(name, "GitRepository", "app", "", rev))
	}
	// waitsFor is Kustomization name of source (a GitRepository) on rev, waiting for its
	// dependency infra with message.
	waitsFor := func(name, source, rev, message string) string {
		return strings.Replace(ks(name, "GitRepository", source, ", dependsOn: [{name: infra}]", rev),
			`{type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: `+rev+`", observedGeneration: 2}`,
			`{type: Ready, status: "False", reason: DependencyNotReady, message: "`+message+`", observedGeneration: 2}`, 1)
	}
	notReady := "dependency 'flux-system/infra' is not ready"
	fleetRepo := strings.Replace(gitRepoStored(fleetRev), "name: app,", "name: fleet,", 1)
	fleetFetching := `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: fleet, namespace: flux-system, generation: 1}
status:
  observedGeneration: -1
  conditions:
  - {type: Reconciling, status: "True", reason: Progressing, message: "building artifact"}
  - {type: Ready, status: Unknown, reason: Progressing, message: "building artifact"}`
	onFleetFetching := strings.NewReplacer(
		`{type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: `+revOfA+`", observedGeneration: 2}`,
		`{type: Ready, status: "False", reason: ArtifactFailed, message: "Source artifact not found, retrying in 30s", observedGeneration: 3}`,
		`generation: 2}`, `generation: 3}`,
	).Replace(ks("flux-system", "GitRepository", "fleet", "", revOfA))
	// A loop through Flux: apps applies both generators, and waits for infra, whose
	// ExternalArtifact the second one (stalled too) has never written.
	infraGen := ownedBy(strings.NewReplacer("name: gen,", "name: infra,", "{name: gen,", "{name: infra,").Replace(generator), kustomizeGroup, "flux-system", "apps")
	infraOfItsArtifact := strings.Replace(ks("infra", "ExternalArtifact", "infra", "", revA),
		`{type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: `+revA+`"`,
		`{type: Ready, status: "False", reason: ArtifactFailed, message: "Source artifact not found, retrying in 30s"`, 1)

	// A GitRepository with no artifact, stalled on a URL that does not parse: it fetches
	// nothing before its spec changes.
	fleetStalled := `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: fleet, namespace: flux-system, generation: 1}
status:
  observedGeneration: 1
  conditions:
  - {type: Stalled, status: "True", reason: URLInvalid, message: "failed to parse url", observedGeneration: 1}
  - {type: Ready, status: "False", reason: URLInvalid, message: "failed to parse url", observedGeneration: 1}`
	// HelmRelease shop/web applies the generator from a HelmChart with no artifact, stalled
	// on a chart reference its GitRepository's current revision does not hold: nothing builds
	// it again before its spec or that repository changes.
	const chartsRev = "main@sha1:9999999999999999999999999999999999999999"
	refused := "invalid chart reference: no chart name found at path charts/web"
	byRelease := strings.Replace(appliedBy(generator, "helm.toolkit.fluxcd.io", "web"),
		"helm.toolkit.fluxcd.io/namespace: flux-system", "helm.toolkit.fluxcd.io/namespace: shop", 1)
	stalledChart := []string{`apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: web, namespace: shop, generation: 2}
spec:
  interval: 10m
  chart: {spec: {chart: ./charts/web, sourceRef: {kind: GitRepository, name: charts}}}
status:
  observedGeneration: 1
  helmChart: shop/shop-web
  lastAttemptedGeneration: 1
  conditions:
  - {type: Ready, status: "False", reason: SourceNotReady, message: "HelmChart 'shop/shop-web' is not ready: ` + refused + `", observedGeneration: 2}`,
		`apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmChart
metadata: {name: shop-web, namespace: shop, generation: 2}
spec: {chart: ./charts/web, interval: 5m, sourceRef: {kind: GitRepository, name: charts}}
status:
  observedGeneration: 2
  observedSourceArtifactRevision: "` + chartsRev + `"
  conditions:
  - {type: Stalled, status: "True", reason: InvalidChartReference, message: "` + refused + `", observedGeneration: 2, lastTransitionTime: "2026-11-01T11:50:00Z"}
  - {type: Ready, status: "False", reason: InvalidChartReference, message: "` + refused + `", observedGeneration: 2, lastTransitionTime: "2026-11-01T11:50:00Z"}`,
		strings.NewReplacer("name: app,", "name: charts,", "namespace: flux-system,", "namespace: shop,").Replace(gitRepoStored(chartsRev))}

	waits := outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"}
	fails := outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"}
	runFixtureCases(t, []fixtureCase{
		{name: "its applier failed to build A, its source (the generator's too) not on B yet: it waits", looks: []fixtureLook{{
			docs: append(root(revOfA), byFluxSystem, buildFailedOn("flux-system", revOfA)),
			want: expected{Outcome: waits, Says: []string{"the fix may be on its way: Kustomization/flux-system/flux-system"}}}}},
		{name: "its applier failed to build B: it fails, saying so", looks: []fixtureLook{{
			docs: append(root(revB), byFluxSystem, buildFailedOn("flux-system", revB)),
			want: expected{Outcome: fails, Says: []string{"; no fix is on its way: Kustomization/flux-system/flux-system, which applies ArtifactGenerator/flux-system/gen, failed on its source's current artifact (revision main@sha1:bbbbbbb failed: kustomize build failed"}}}}},
		{name: "its applier suspended: it fails, saying so", looks: []fixtureLook{{
			docs: append(root(revB), byFluxSystem, ks("flux-system", "GitRepository", "app", ", suspend: true", revOfA)),
			want: expected{Outcome: fails, Says: []string{"; no fix is on its way: Kustomization/flux-system/flux-system, which applies ArtifactGenerator/flux-system/gen, is suspended"}}}}},
		{name: "its applier waits for infra, failed on A, their source not on B yet: it waits", looks: []fixtureLook{{
			docs: append(root(revOfA), byFluxSystem, waitsFor("flux-system", "app", revOfA, notReady), buildFailedOn("infra", revOfA)),
			want: expected{Outcome: waits, Says: []string{"the fix may be on its way: Kustomization/flux-system/flux-system"}}}}},
		{name: "its applier waits for infra, failed on B: it fails, saying so", looks: []fixtureLook{{
			docs: append(root(revB), byFluxSystem, waitsFor("flux-system", "app", revOfA, notReady), buildFailedOn("infra", revB)),
			want: expected{Outcome: fails, Says: []string{"; no fix is on its way: Kustomization/flux-system/flux-system, which applies ArtifactGenerator/flux-system/gen, waits for Kustomization/flux-system/infra (dependsOn), which failed"}}}}},
		{name: "its applier's source on its first fetch: it waits", looks: []fixtureLook{{
			docs: append(root(revB), byFluxSystem, onFleetFetching, fleetFetching),
			want: expected{Outcome: waits, Says: []string{"the fix may be on its way: Kustomization/flux-system/flux-system"}}}}},
		{name: "its applier suspended while its source, the generator's, is still to fetch B: it fails, saying so", looks: []fixtureLook{{
			docs: append(root(revOfA), byFluxSystem, ks("flux-system", "GitRepository", "app", ", suspend: true", revOfA)),
			want: expected{Outcome: fails, Says: []string{"; no fix is on its way: Kustomization/flux-system/flux-system, which applies ArtifactGenerator/flux-system/gen, is suspended"}}}}},
		{name: "its applier's source has no artifact and is stalled: it fails, saying so", looks: []fixtureLook{{
			docs: append(root(revB), byFluxSystem, onFleetFetching, fleetStalled),
			want: expected{Outcome: fails, Says: []string{"; no fix is on its way: Kustomization/flux-system/flux-system, which applies ArtifactGenerator/flux-system/gen, applies from a source that will serve no artifact: GitRepository/flux-system/fleet"}}}}},
		{name: "its applier a HelmRelease whose chart has no artifact and is stalled on its source's revision: it fails", looks: []fixtureLook{
			{docs: append(append(root(revB), byRelease), stalledChart...),
				want: expected{Outcome: fails, Says: []string{"applies from a source that will serve no artifact: HelmChart/shop/shop-web"}}},
			{at: fixtureNow.Add(30 * time.Minute), docs: append(append(root(revB), byRelease), stalledChart...),
				want: expected{Outcome: fails}},
		}},
		// Flux waits for a dependency not found for ever, and it may still be created: the
		// chain waits for it as a root waits for its own (the not-found grace; `get` at once).
		{name: "its applier waits for a dependency not found: it waits out the not-found grace, then fails", looks: []fixtureLook{
			{docs: append(root(revB), byFluxSystem, waitsFor("flux-system", "app", revOfA, "unable to get 'flux-system/infra' dependency: not found")),
				want: expected{Outcome: waits, Says: []string{"the fix may be on its way"}},
				get: &expected{Outcome: fails, Says: []string{"no fix is on its way: Kustomization/flux-system/flux-system, which applies ArtifactGenerator/flux-system/gen, " +
					"waits for Kustomization/flux-system/infra (dependsOn), which is missing: Kustomization/flux-system/infra not found; no Kustomization or ResourceSet is creating it"}}},
			{at: fixtureNow.Add(30 * time.Minute), docs: append(root(revB), byFluxSystem, waitsFor("flux-system", "app", revOfA, "unable to get 'flux-system/infra' dependency: not found")),
				want: expected{Outcome: fails, Says: []string{"which is missing: Kustomization/flux-system/infra not found; no Kustomization or ResourceSet is creating it"}}},
		}},
		{name: "up the chain, the top waits for infra, failed on A, their source not on B yet: it waits", looks: []fixtureLook{{
			docs: append(root(revOfA), ownedBy(generator, kustomizeGroup, "flux-system", "apps"),
				ownedBy(ks("apps", "GitRepository", "fleet", "", fleetRev), kustomizeGroup, "flux-system", "flux-system"), fleetRepo,
				waitsFor("flux-system", "app", revOfA, notReady), buildFailedOn("infra", revOfA)),
			want: expected{Outcome: waits, Says: []string{"the fix may be on its way: Kustomization/flux-system/flux-system"}}}}},
		{name: "up the chain, the top suspended: it fails, naming the chain", looks: []fixtureLook{{
			docs: append(root(revB), ownedBy(generator, kustomizeGroup, "flux-system", "apps"),
				ownedBy(ks("apps", "GitRepository", "fleet", "", fleetRev), kustomizeGroup, "flux-system", "flux-system"), fleetRepo,
				ks("flux-system", "GitRepository", "app", ", suspend: true", revOfA)),
			want: expected{Outcome: fails, Says: []string{"; no fix is on its way: Kustomization/flux-system/flux-system, which applies Kustomization/flux-system/apps, which applies ArtifactGenerator/flux-system/gen, is suspended"}}}}},
		{name: "its applier waits for an object of a generator it applies, stalled too: it fails", looks: []fixtureLook{{
			docs: append(root(revB), ownedBy(generator, kustomizeGroup, "flux-system", "apps"), waitsFor("apps", "app", revOfA, notReady),
				infraOfItsArtifact, externalArtifact("infra", "flux-system", ""), infraGen),
			want: expected{Outcome: fails}}}},
	})
}

// TestStuckApplierSourceReadAgain: the failure of a root whose generator's applier is stuck
// (failed to build what its source serves), or done while one up its chain is stuck, rests
// on the read of that applier's source, as it does when the whole chain is done: read before
// the applier's status, the source may serve a newer artifact by then, which
// kustomize-controller is about to apply, so it is read again.
func TestStuckApplierSourceReadAgain(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	const fleetRev = "main@sha1:fffffffffffffffffffffffffffffffffffffff1"
	generator := appliedBy(artifactGenerator("gen", "flux-system", digestOf(revOfA), stalledConditions...), "kustomize.toolkit.fluxcd.io", "flux-system")
	fleetRepo := strings.NewReplacer("name: app,", "name: fleet,", "namespace: flux-system,", "namespace: fleet,").Replace(gitRepoStored(fleetRev))
	applier := strings.NewReplacer(
		`lastAppliedRevision: "`+fleetRev+`"`, `lastAppliedRevision: "main@sha1:fffffffffffffffffffffffffffffffffffffff0"`,
		`{type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: `+fleetRev+`", observedGeneration: 2}`,
		`{type: Ready, status: "False", reason: BuildFailed, message: "kustomize build failed: accumulating resources", observedGeneration: 2, lastTransitionTime: "2026-11-01T11:58:00Z"}`,
		`name: fleet}`, `name: fleet, namespace: fleet}`,
	).Replace(ks("flux-system", "GitRepository", "fleet", "", fleetRev))
	// Done on the fleet repository, applied by a suspended flux-system.
	doneUnderSuspended := []string{
		strings.Replace(generator, "kustomize.toolkit.fluxcd.io/name: flux-system", "kustomize.toolkit.fluxcd.io/name: apps", 1),
		ownedBy(strings.Replace(ks("apps", "GitRepository", "fleet", "", fleetRev), "name: fleet}", "name: fleet, namespace: fleet}", 1),
			"kustomize.toolkit.fluxcd.io", "flux-system", "flux-system"),
		ks("flux-system", "GitRepository", "app", ", suspend: true", revOfA), fleetRepo}
	rev, err := flux.ParseRevision(revB)
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Resources: []flux.Ref{{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}}, Revision: rev, Workloads: true, Health: fluxhealth.New(t.Context())}
	for name, appliers := range map[string][]string{
		"the applier failed to build what its source serves":  {generator, applier, fleetRepo},
		"the applier done, the one that applies it suspended": doneUnderSuspended,
	} {
		docs := append([]string{ks("app", "ExternalArtifact", "gen", "", revOfA), gitRepoStored(revB), externalArtifact("gen", "flux-system", revOfA)}, appliers...)
		// The GitRepositories listed before the Kustomizations.
		view := newFixtureView(t, strings.Join(docs, "\n---\n"), "gitrepositories", "kustomizations", "artifactgenerators", "externalartifacts")
		e := Assess(view, NewMemory(), spec, fixtureNow)
		if e.Fatal == nil || !strings.Contains(e.Fatal.Message, "no fix is on its way") {
			t.Errorf("%s: the root's failure: %+v, want one that says no fix is on its way", name, e.Fatal)
			continue
		}
		if !slices.ContainsFunc(e.Unconfirmed, func(k ListKey) bool { return k.GVR.Resource == "gitrepositories" && k.Namespace == "fleet" }) {
			t.Errorf("%s: the applier's source, listed before the applier, is not read again: %v", name, e.Unconfirmed)
		}
	}
}

// TestNestedGeneratorFixOnItsWay: a nested Kustomization on an ExternalArtifact whose
// ArtifactGenerator is stalled waits while the generator's applier has not applied what its
// source serves (the fix may be in it), as a root on it does, and fails, saying why, once
// nothing Flux is about to apply may change the generator.
func TestNestedGeneratorFixOnItsWay(t *testing.T) {
	t.Parallel()
	const fleetRev = "main@sha1:fffffffffffffffffffffffffffffffffffffff1"
	latest := "latest@sha256:" + dig1
	generator := appliedBy(artifactGenerator("outer", "flux-system", digestOf(revB), stalledConditions...), "kustomize.toolkit.fluxcd.io", "gens")
	fleetRepo := strings.Replace(gitRepoStored(fleetRev), "name: app,", "name: fleet,", 1)
	// gens at work on the fleet repository's current artifact (it applied ...f0 before).
	atWork := atWorkOnFleet("gens")
	docs := func(gens string) []string {
		return []string{ks("app", "GitRepository", "app", "", revB, "flux-system_outer_kustomize.toolkit.fluxcd.io_Kustomization"), gitRepoStored(revB),
			ks("outer", "ExternalArtifact", "outer", "", latest), externalArtifact("outer", "flux-system", latest), generator, gens, fleetRepo}
	}
	runFixtureCases(t, []fixtureCase{
		{name: "the generator's applier at work: it waits", looks: []fixtureLook{{
			docs: docs(atWork),
			want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "SourceNotReady"}, Says: []string{"the fix may be on its way: Kustomization/flux-system/gens"}}}}},
		{name: "the generator's applier suspended: it fails, saying why", looks: []fixtureLook{{
			docs: docs(ks("gens", "GitRepository", "fleet", ", suspend: true", "main@sha1:fffffffffffffffffffffffffffffffffffffff0")),
			want: expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"},
				Says: []string{"no fix is on its way: Kustomization/flux-system/gens, which applies ArtifactGenerator/flux-system/outer, is suspended"}}}}},
		// What says nothing of what the applier will apply fails a nested object, as it did
		// before the applier was judged: a hold would last to the deadline.
		{name: "the generator's applier not found: it waits out the not-found grace, then fails, saying so", looks: []fixtureLook{
			{docs: docs(""), want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "SourceNotReady"},
				Says: []string{"the fix may be on its way: Kustomization/flux-system/gens, which applies ArtifactGenerator/flux-system/outer, is not found yet"}},
				get: &expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"},
					Says: []string{"no fix is on its way: Kustomization/flux-system/gens, which applies ArtifactGenerator/flux-system/outer, is not found"}}},
			{at: fixtureNow.Add(30 * time.Minute), docs: docs(""),
				want: expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"},
					Says: []string{"no fix is on its way: Kustomization/flux-system/gens, which applies ArtifactGenerator/flux-system/outer, is not found"}}},
		}},
	})
}

// TestUpstreamGeneratorFixOnItsWay: a root on the ExternalArtifact of a generator current to
// its source, itself the ExternalArtifact of a stalled generator, waits while the stalled
// generator's applier has not applied what its source serves (the fix may be in it), though
// the first generator's applier is done; it fails once neither applier may bring a fix,
// saying why for the stalled one.
func TestUpstreamGeneratorFixOnItsWay(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	const kustomizeGroup = "kustomize.toolkit.fluxcd.io"
	const fleetRev = "main@sha1:fffffffffffffffffffffffffffffffffffffff1"
	latest := "latest@sha256:" + dig1
	outer := ownedBy(`apiVersion: source.extensions.fluxcd.io/v1beta1
kind: ArtifactGenerator
metadata: {name: outer, namespace: flux-system, generation: 3}
spec:
  sources: [{alias: up, kind: ExternalArtifact, name: gen}]
  artifacts: [{name: outer, copy: [{from: "@up/**", to: "@artifact/"}]}]
status:
  observedSourcesDigest: "`+flux.ObservedSourcesDigest(map[string]flux.ObservedSource{"up": {Revision: revOfA}})+`"
  conditions:
  - `+generatorReady, kustomizeGroup, "flux-system", "apps")
	inner := ownedBy(artifactGenerator("gen", "flux-system", digestOf(revOfA), stalledConditions...), kustomizeGroup, "flux-system", "infra")
	fleetRepo := strings.Replace(gitRepoStored(fleetRev), "name: app,", "name: fleet,", 1)
	atWork := atWorkOnFleet("infra")
	docs := func(infra string) []string {
		return []string{ks("app", "ExternalArtifact", "outer", "", latest), gitRepoStored(revB), externalArtifact("outer", "flux-system", latest),
			externalArtifact("gen", "flux-system", revOfA), outer, inner, ks("apps", "GitRepository", "fleet", "", fleetRev), infra, fleetRepo}
	}
	runFixtureCases(t, []fixtureCase{
		{name: "the stalled generator's applier at work: it waits", looks: []fixtureLook{{
			docs: docs(atWork),
			want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"}, Says: []string{"the fix may be on its way: Kustomization/flux-system/infra"}}}}},
		{name: "the stalled generator's applier suspended: it fails, saying why", looks: []fixtureLook{{
			docs: docs(ks("infra", "GitRepository", "fleet", ", suspend: true", "main@sha1:fffffffffffffffffffffffffffffffffffffff0")),
			want: expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"},
				Says: []string{"no fix is on its way: Kustomization/flux-system/infra, which applies ArtifactGenerator/flux-system/gen, is suspended"}}}}},
		// An upstream generator's applier whose state says nothing of what it will apply does
		// not hold the root, whose own generator's applier is done.
		{name: "the stalled generator's applier not found: it waits out the not-found grace, then fails, saying so", looks: []fixtureLook{
			{docs: docs(""), want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"},
				Says: []string{"the fix may be on its way: Kustomization/flux-system/infra, which applies ArtifactGenerator/flux-system/gen, is not found yet"}},
			},
			{at: fixtureNow.Add(30 * time.Minute), docs: docs(""),
				want: expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"},
					Says: []string{"no fix is on its way: Kustomization/flux-system/infra, which applies ArtifactGenerator/flux-system/gen, is not found"}}},
		}},
		{name: "the stalled generator unlabelled, the first one's applier suspended: it fails, naming that one", looks: []fixtureLook{{
			docs: []string{ks("app", "ExternalArtifact", "outer", "", latest), gitRepoStored(revB), externalArtifact("outer", "flux-system", latest),
				externalArtifact("gen", "flux-system", revOfA), outer,
				strings.Replace(inner, "labels: {kustomize.toolkit.fluxcd.io/name: infra, kustomize.toolkit.fluxcd.io/namespace: flux-system}, ", "", 1),
				ks("apps", "GitRepository", "fleet", ", suspend: true", "main@sha1:fffffffffffffffffffffffffffffffffffffff0"), fleetRepo},
			want: expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"},
				Says: []string{"no fix is on its way: Kustomization/flux-system/apps, which applies ArtifactGenerator/flux-system/outer, is suspended"}}}}},
	})
}

// twoSourceGenerator is ArtifactGenerator flux-system/outer, Ready, built from GitRepository
// app at revOfA and from ExternalArtifact gen at upRev, writing ExternalArtifact outer with the
// revision of the source revision names ("@app", "@up").
func twoSourceGenerator(revOfA, upRev, revision string) string {
	return `apiVersion: source.extensions.fluxcd.io/v1beta1
kind: ArtifactGenerator
metadata: {name: outer, namespace: flux-system, generation: 3}
spec:
  sources: [{alias: app, kind: GitRepository, name: app, namespace: flux-system}, {alias: up, kind: ExternalArtifact, name: gen}]
  artifacts: [{name: outer, revision: "` + revision + `", copy: [{from: "@up/**", to: "@artifact/"}]}]
status:
  observedSourcesDigest: "` + flux.ObservedSourcesDigest(map[string]flux.ObservedSource{
		"app": {Digest: "sha256:" + dig1, Revision: revOfA, URL: "http://source-controller/gitrepository/flux-system/app/" + revOfA[len(revOfA)-12:] + ".tar.gz"},
		"up":  {Revision: upRev}}) + `"
  conditions:
  - ` + generatorReady
}

// TestUpstreamGeneratorStalledRevisionComesAnotherWay: the root applies ExternalArtifact
// outer, whose generator copies the artifact of a stalled generator upstream (gen) and takes
// its revision from GitRepository app, which has not fetched the expected commit yet. When app
// fetches it, outer's generator builds again, copying gen's old artifact, and outer serves the
// commit: the root waits for that. It fails when the revision comes through the stalled
// generator, or from a source that will fetch nothing more.
func TestUpstreamGeneratorStalledRevisionComesAnotherWay(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	upRev := "latest@sha256:" + dig1
	stalled := strings.Replace(artifactGenerator("gen", "flux-system", digestOf(revOfA), stalledConditions...),
		"name: app, namespace: flux-system}]", "name: other, namespace: flux-system}]", 1)
	docs := func(outer, app string, more ...string) []string {
		return append([]string{ks("app", "ExternalArtifact", "outer", "", revOfA), app, externalArtifact("outer", "flux-system", revOfA),
			externalArtifact("gen", "flux-system", upRev), outer, stalled}, more...)
	}
	// mid is an ExternalArtifact of a Ready generator built from app's current artifact.
	mid := []string{externalArtifact("mid", "flux-system", revOfA), artifactGenerator("mid", "flux-system", digestOf(revOfA), generatorReady)}
	throughMid := strings.NewReplacer(`{alias: app, kind: GitRepository, name: app, namespace: flux-system}`, `{alias: app, kind: ExternalArtifact, name: mid}`,
		flux.ObservedSourcesDigest(map[string]flux.ObservedSource{"app": {Digest: "sha256:" + dig1, Revision: revOfA, URL: "http://source-controller/gitrepository/flux-system/app/" + revOfA[len(revOfA)-12:] + ".tar.gz"}, "up": {Revision: upRev}}),
		flux.ObservedSourcesDigest(map[string]flux.ObservedSource{"app": {Revision: revOfA}, "up": {Revision: upRev}})).
		Replace(twoSourceGenerator(revOfA, upRev, "@app"))
	runFixtureCases(t, []fixtureCase{
		{name: "its revision's source has not fetched the commit: it waits", looks: []fixtureLook{{
			docs: docs(twoSourceGenerator(revOfA, upRev, "@app"), gitRepoStored(revOfA)),
			want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"},
				Says: []string{"GitRepository/flux-system/app, which ExternalArtifact/flux-system/outer takes its revision from, may still bring main@sha1:bbbbbbb, though " +
					"ExternalArtifact/flux-system/gen, a source of ArtifactGenerator/flux-system/outer: ArtifactGenerator/flux-system/gen"}}}}},
		{name: "its revision from the stalled generator's artifact: it fails", looks: []fixtureLook{{
			docs: docs(twoSourceGenerator(revOfA, upRev, "@up"), gitRepoStored(revOfA)),
			want: expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"},
				Says: []string{"ExternalArtifact/flux-system/gen, a source of ArtifactGenerator/flux-system/outer: ArtifactGenerator/flux-system/gen"}}}}},
		{name: "its revision's source suspended: it fails", looks: []fixtureLook{{
			docs: docs(twoSourceGenerator(revOfA, upRev, "@app"), strings.Replace(gitRepoStored(revOfA), "status:", "spec: {suspend: true}\nstatus:", 1)),
			want: expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"}}}}},
		{name: "its revision from a generator whose source has not fetched the commit: it waits", looks: []fixtureLook{{
			docs: docs(throughMid, gitRepoStored(revOfA), mid...),
			want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"},
				Says: []string{"ExternalArtifact/flux-system/mid, which ExternalArtifact/flux-system/outer takes its revision from, may still bring main@sha1:bbbbbbb"}}}}},
	})
}

// TestUpstreamGeneratorWithoutArtifact: a generator builds nothing before each of its sources
// has an artifact; an ExternalArtifact source that has none, from a stalled generator, gets
// none, and the root that waits on the first generator's build fails, naming it. It waits
// while that generator is at work.
func TestUpstreamGeneratorWithoutArtifact(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	inner := func(conditions ...string) string {
		return strings.Replace(artifactGenerator("gen", "flux-system", "", conditions...),
			"name: app, namespace: flux-system}]", "name: other, namespace: flux-system}]", 1)
	}
	docs := func(gen string) []string {
		return []string{ks("app", "ExternalArtifact", "outer", "", revOfA), gitRepoStored(revB), externalArtifact("outer", "flux-system", revOfA),
			externalArtifact("gen", "flux-system", ""), twoSourceGenerator(revOfA, "latest@sha256:"+dig1, "@app"), gen}
	}
	runFixtureCases(t, []fixtureCase{
		{name: "its generator stalled: it fails", looks: []fixtureLook{{
			docs: docs(inner(stalledConditions...)),
			want: expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"},
				Says: []string{"ExternalArtifact/flux-system/gen, a source of ArtifactGenerator/flux-system/outer, has no artifact: " +
					"ArtifactGenerator/flux-system/gen (which writes ExternalArtifact/flux-system/gen, no artifact yet) stalled: invalid path pattern"}}}}},
		{name: "its generator at work: it waits", looks: []fixtureLook{{
			docs: docs(inner(`{type: Ready, status: "Unknown", reason: Progressing, message: "building", observedGeneration: 3}`)),
			want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"},
				Says: []string{"waiting for ExternalArtifact/flux-system/gen, a source of ArtifactGenerator/flux-system/outer"}}}}},
	})
}

// TestRootGeneratorSourceWillNotCome: source-watcher builds nothing before each source of a
// generator has an artifact (observeSources: "source ... is not ready", SourceFetchFailed,
// retried for ever). The root waits on its own generator's build for the commit: a source
// that has no artifact and will get none fails it, as a root's own source would: a
// GitRepository source-controller stalled on (an invalid URL) or suspended, and one not found
// once it has been missing for the not-found grace with nothing creating it (meanwhile it
// waits). A source still fetching holds it.
func TestRootGeneratorSourceWillNotCome(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	repo := func(spec, conditions string) string {
		return `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: app, namespace: flux-system, generation: 2}
` + spec + `status:
  observedGeneration: 2
  conditions: [` + conditions + `]`
	}
	stalled := repo("", `{type: Stalled, status: "True", reason: URLInvalid, message: "invalid URL", observedGeneration: 2}, {type: Ready, status: "False", reason: URLInvalid, message: "invalid URL", observedGeneration: 2}`)
	suspended := repo("spec: {suspend: true}\n", "")
	fetching := repo("", `{type: Reconciling, status: "True", reason: Progressing, message: "cloning", observedGeneration: 2}, {type: Ready, status: "Unknown", reason: Progressing, message: "cloning", observedGeneration: 2}`)
	gen := artifactGenerator("gen", "flux-system", digestOf(revOfA), `{type: Ready, status: "False", reason: SourceFetchFailed, message: "get sources failed: source 'GitRepository/flux-system/app' is not ready", observedGeneration: 3}`)
	docs := func(more ...string) []string {
		return append([]string{ks("app", "ExternalArtifact", "gen", "", revOfA), externalArtifact("gen", "flux-system", revOfA), gen}, more...)
	}
	fails := func(says string) expected {
		return expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"}, Says: []string{says}}
	}
	waits := expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"}}
	later := fixtureNow.Add(30 * time.Minute)
	runFixtureCases(t, []fixtureCase{
		{name: "its source stalled without an artifact: it fails", looks: []fixtureLook{{docs: docs(stalled),
			want: fails("GitRepository/flux-system/app, a source of ArtifactGenerator/flux-system/gen, has no artifact and will get none: it stalled (invalid URL)")}}},
		// A suspended source is waited for, as a root on it waits: the commit may resume it.
		{name: "its source suspended without an artifact: it waits", looks: []fixtureLook{{at: later, docs: docs(suspended), want: waits}}},
		{name: "its source fetching its first artifact: it waits", looks: []fixtureLook{{at: later, docs: docs(fetching), want: waits}}},
		{name: "its source not found: it waits, then fails past the not-found grace", looks: []fixtureLook{{docs: docs(), want: waits},
			{at: later, docs: docs(), want: fails("ArtifactGenerator/flux-system/gen builds nothing before each of its sources has an artifact: GitRepository/flux-system/app not found (a source of ArtifactGenerator/flux-system/gen); no Kustomization or ResourceSet is creating it")}}},
	})
}

// stalledOnContent are the conditions of an ArtifactGenerator source-watcher stalled on for
// its source's content (a path pattern's captured value, reason BuildFailed), at 11:56, at
// generation 3: its next reconcile, on a source's new artifact, clears the stall.
var stalledOnContent = []string{
	`{type: Ready, status: "False", reason: BuildFailed, message: "failed to expand path pattern: captured value \"My_App\" is not a valid label value", observedGeneration: 3, lastTransitionTime: "2026-11-01T11:56:00Z"}`,
	`{type: Stalled, status: "True", reason: BuildFailed, message: "failed to expand path pattern: captured value \"My_App\" is not a valid label value", observedGeneration: 3, lastTransitionTime: "2026-11-01T11:56:00Z"}`}

// TestGeneratorStalledOnContentSourceStoredAgain: outer, whose path pattern failed on its
// sources' content, is stalled (BuildFailed, 11:56) after app fetched the commit (11:55). GEN,
// Ready, then stores its artifact again (lastUpdateTime: the time of its build) under the same
// revision. source-watcher reconciles a stalled generator again only on a source's new
// revision (sourceChangePredicate: HasRevision), and that reconcile marks it Ready Unknown
// before it builds: a stall older than the newest artifact stands once stallRebuildGrace (2
// minutes) has passed since that artifact was stored; within it, the root waits, and looks
// again at its end.
func TestGeneratorStalledOnContentSourceStoredAgain(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	upRev := "latest@sha256:" + dig1
	outer := strings.Replace(twoSourceGenerator(revOfA, upRev, "@app"), generatorReady, strings.Join(stalledOnContent, "\n  - "), 1)
	gen := artifactGenerator("gen", "flux-system", digestOf(revB), generatorReady)
	storedAt := func(at string) string {
		return strings.Replace(externalArtifact("gen", "flux-system", upRev), `artifact: {revision: "`+upRev+`"}`,
			`artifact: {revision: "`+upRev+`", lastUpdateTime: "`+at+`"}`, 1)
	}
	docs := func(genEA string) []string {
		return []string{ks("app", "ExternalArtifact", "outer", "", revOfA), gitRepoStored(revB), externalArtifact("outer", "flux-system", revOfA),
			genEA, outer, gen}
	}
	fails := expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"},
		Says: []string{"ArtifactGenerator/flux-system/outer (which writes ExternalArtifact/flux-system/outer, artifact main@sha1:a1b2c3d) failed to build from its sources' current artifacts"}}
	runFixtureCases(t, []fixtureCase{
		{name: "gen's artifact stored before the stall: it fails", looks: []fixtureLook{{docs: docs(storedAt("2026-11-01T11:54:00Z")), want: fails}}},
		{name: "stored again after the stall, past the grace: it fails", looks: []fixtureLook{{docs: docs(storedAt("2026-11-01T11:57:00Z")), want: fails}}},
		{name: "stored again after the stall, within the grace: it waits", looks: []fixtureLook{{docs: docs(storedAt("2026-11-01T11:59:00Z")),
			want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"}, Recheck: time.Date(2026, 11, 1, 12, 1, 0, 0, time.UTC)}}}},
	})
}

// TestGeneratorStalledOnContent: source-watcher stalls a generator whose path pattern fails on
// its sources' content (terminalPathPatternError, reason BuildFailed), and builds it again
// when a source serves a new artifact (its reconcile marks it Reconciling, which clears the
// stall). Such a stall is a failed build: the root waits while the source has not fetched
// the expected commit, and fails once it has, and for the root's own generator as for one
// up the chain. A stall for the spec (ValidationFailed) fails at once.
func TestGeneratorStalledOnContent(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	upstream := artifactGenerator("gen", "flux-system", "", stalledOnContent...)
	outer := strings.Replace(twoSourceGenerator(revOfA, "latest@sha256:"+dig1, "@app"), generatorReady,
		`{type: Ready, status: "False", reason: SourceFetchFailed, message: "get sources failed: source 'ExternalArtifact/flux-system/gen' is not ready", observedGeneration: 3}`, 1)
	upChain := func(app string) []string {
		return []string{ks("app", "ExternalArtifact", "outer", "", revOfA), app, externalArtifact("outer", "flux-system", revOfA),
			externalArtifact("gen", "flux-system", ""), outer, upstream}
	}
	own := func(app, conditions string) []string {
		return []string{ks("app", "ExternalArtifact", "gen", "", revOfA), app, externalArtifact("gen", "flux-system", revOfA),
			artifactGenerator("gen", "flux-system", digestOf(revOfA), conditions)}
	}
	fails := outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"}
	runFixtureCases(t, []fixtureCase{
		{name: "up the chain, its source not on the commit yet: it waits", looks: []fixtureLook{{
			docs: upChain(gitRepoStored(revOfA)), want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"}}}}},
		{name: "up the chain, its source on the commit: it fails", looks: []fixtureLook{{
			docs: upChain(gitRepoStored(revB)),
			want: expected{Outcome: fails, Says: []string{"ExternalArtifact/flux-system/gen, a source of ArtifactGenerator/flux-system/outer, has no artifact: " +
				"ArtifactGenerator/flux-system/gen (which writes ExternalArtifact/flux-system/gen, no artifact yet) failed to build from its sources' current artifacts"}}}}},
		{name: "the root's own, its source not on the commit yet: it waits", looks: []fixtureLook{{
			docs: own(gitRepoStored(revOfA), strings.Join(stalledOnContent, "\n  - ")), want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"}}}}},
		{name: "the root's own, stalled for its spec: it fails", looks: []fixtureLook{{
			docs: own(gitRepoStored(revOfA), strings.Join(stalledConditions, "\n  - ")), want: expected{Outcome: fails, Says: []string{"stalled: invalid path pattern"}}}}},
	})
}
