package assess

import (
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// producerWait judges an ExternalArtifact src, settled by its own status, by the
// ArtifactGenerator that writes it (src.Producer): it holds that generator's last build,
// Ready whether or not the generator has built from its sources' current artifacts since
// (flux.GeneratorWait). ownerID is the Flux object that applies from src. What decides rests
// on reads no earlier than ownerID's status (the generator's list, its sources'), and src's
// list on one no earlier than the generator's status, which its build writes after src's.
// A generator that cannot be read (the credentials, a cluster without source-watcher's CRDs)
// leaves src judged by its own status, and note says so. want, when set, is the revision
// ownerID waits for (flux.GeneratorWait). failing is, when the verdict is Failed, the
// ExternalArtifact whose generator failed, src or one up its chain, then those of the chain
// between it and src, the nearest to it first.
func (a *assessor) producerWait(e *Assessment, src flux.Source, ownerID string, want flux.Revision) (verdict result.Verdict, code result.Code, message, note string, failing []flux.Source) {
	p := a.producerWaitAt(e, src, ownerID, want, newChainWalk())
	if p.failing.Producer.Name != "" {
		failing = append([]flux.Source{p.failing}, p.via...)
	}
	return p.verdict, p.code, p.message, p.note, failing
}

// producerVerdict is producerWait's judgment of one ExternalArtifact by its generator.
type producerVerdict struct {
	verdict       result.Verdict
	code          result.Code
	message, note string
	// failing is the ExternalArtifact whose generator failed, when the verdict is Failed; via
	// are the ExternalArtifacts of the chain between it and the one judged, the nearest to
	// failing first: their generators build the failure's way down.
	failing flux.Source
	via     []flux.Source
	// atWork says, of an InProgress verdict, that the generator builds, or will build by
	// itself (what it waits for is on its way): the artifact may change. Not for one that is
	// not found, or waits on a source that is not found or will not come.
	atWork bool
}

// chainWalk is one producerWait up a chain of generators: each ExternalArtifact of the chain
// is judged once, and the same way, whichever way and order of sources leads to it.
type chainWalk struct {
	// judging holds the generators being judged: a loop ends where it closes.
	judging map[string]bool
	// judged holds each ExternalArtifact's judgment, by ID.
	judged map[string]producerVerdict
	// brings holds whether each ExternalArtifact may still bring the revision waited for
	// (mayBring), by ID, once decided; deciding, those being decided (a loop brings nothing).
	brings, deciding map[string]bool
	// cuts counts the loops cut so far: a "brings nothing" decided while one was cut is not
	// kept for good (the loop's other end, once judged, may bring it).
	cuts int
	// cutAt holds what a cut met (a generator being judged, an artifact whose mayBring is
	// being decided) while it is still on the walk's stack; epoch counts those that left it
	// since the walk began. A "brings nothing" decided under a cut is provisional, kept by
	// epoch: it holds until a cut end leaves the stack, so a loop is not decided again on
	// every way down to it.
	cutAt       map[string]bool
	epoch       int
	provisional map[string]provisionalNo
	// order numbers the entries on the walk's stack as they were pushed (seq); low is the
	// lowest order a cut has met within the mayBring decision under way. A "no" whose cuts
	// met only entries pushed after its own (low no lower than its order: the loop closed
	// within it) is kept for good, as the root of a strongly connected part is.
	order    map[string]int
	seq, low int
}

// provisionalNo is a "brings nothing" decided under a cut (chainWalk.provisional): the epoch it
// holds for, and the lowest order its cuts met (low). Reused, it counts as a cut that met
// that entry, as deciding it again would.
type provisionalNo struct{ epoch, low int }

// meet notes that a cut met node, an entry on the walk's stack (low).
func (w *chainWalk) meet(node string) {
	if o := w.order[node]; o < w.low {
		w.low = o
	}
}

func newChainWalk() *chainWalk {
	return &chainWalk{judging: map[string]bool{}, judged: map[string]producerVerdict{}, brings: map[string]bool{}, deciding: map[string]bool{},
		cutAt: map[string]bool{}, provisional: map[string]provisionalNo{}, order: map[string]int{}, low: 1 << 62}
}

// leave ends node's turn on the walk's stack: when a cut met it, what was decided under that
// cut may change now (epoch).
func (w *chainWalk) leave(node string) {
	if w.cutAt[node] {
		delete(w.cutAt, node)
		w.epoch++
	}
}

// generatorFixOnItsWay is generatorFixPending for a failure producerWait found: of the
// generator that failed (failing's first), of each of the chain between it and src (the rest
// of failing), and of the one that writes src when that is another (a change to the sources
// of any of them may leave the failing one out). pending when a fix may be on its way;
// settled says why none is, of the failing generator first. A hold on an applier whose
// state says nothing of what it will apply (generatorFixPending's blind: a
// ResourceSet, what the credentials may not read) is a root's alone, on its own artifact's
// generator, as before the chain was followed: for a nested object (nested) or an upstream
// generator it would be a wait to the deadline where the failure was the verdict, and it
// names why no fix comes instead.
func (a *assessor) generatorFixOnItsWay(e *Assessment, src flux.Source, failing []flux.Source, ownerID string, want flux.Revision, nested bool) (pending, settled string) {
	var artifacts []flux.Source
	for _, f := range append(slices.Clip(failing), src) {
		if f.Producer.Name != "" && !slices.ContainsFunc(artifacts, func(a flux.Source) bool { return a.Ref == f.Ref }) {
			artifacts = append(artifacts, f)
		}
	}
	for _, artifact := range artifacts {
		p, s, blind := a.generatorFixPending(e, artifact, ownerID, want)
		switch {
		case p != "" && (!blind || artifact.Ref == src.Ref && !nested):
			return p, ""
		case p != "" && settled == "":
			settled = p
		case s != "" && settled == "":
			settled = s
		}
	}
	return "", settled
}

// producerWaitAt is producerWait for an ExternalArtifact down a chain, judged once in a walk:
// once the generator has built from its sources' current artifacts, each source that is an
// ExternalArtifact of another generator is judged by that one in turn, since an artifact
// current to its own stale source is stale too; to any depth, a loop ending where it closes.
func (a *assessor) producerWaitAt(e *Assessment, src flux.Source, ownerID string, want flux.Revision, walk *chainWalk) producerVerdict {
	if p, ok := walk.judged[src.Ref.ID()]; ok {
		return p
	}
	walk.judging[src.Producer.ID()] = true
	walk.seq++
	walk.order[src.Producer.ID()] = walk.seq
	p := a.judgeProducer(e, src, ownerID, want, walk)
	delete(walk.judging, src.Producer.ID())
	walk.leave(src.Producer.ID())
	delete(walk.order, src.Producer.ID())
	walk.judged[src.Ref.ID()] = p
	return p
}

// upstream is producerWaitAt for in, a source of a generator of the walk; ok is false for a
// source that is no ExternalArtifact, or one whose generator is being judged (a loop).
func (a *assessor) upstream(e *Assessment, in *flux.Source, ownerID string, want flux.Revision, walk *chainWalk) (p producerVerdict, ok bool) {
	if in == nil || in.Producer.Name == "" {
		return p, false
	}
	if p, ok := walk.judged[in.Ref.ID()]; ok {
		return p, true
	}
	if walk.judging[in.Producer.ID()] {
		walk.cuts++
		walk.cutAt[in.Producer.ID()] = true
		walk.meet(in.Producer.ID())
		return p, false
	}
	return a.producerWaitAt(e, *in, ownerID, want, walk), true
}

// judgeProducer is producerWaitAt's judgment of src.
func (a *assessor) judgeProducer(e *Assessment, src flux.Source, ownerID string, want flux.Revision, walk *chainWalk) producerVerdict {
	ref := src.Producer
	code := result.CodeFluxArtifactFailed
	key := ListKey{GVR: flux.ArtifactGeneratorGVR, Namespace: ref.Namespace}
	w := a.list(key)
	notCompared := fmt.Sprintf("not compared with %s, which writes %s: ", ref.ID(), src.Ref.ID())
	if err := w.Err(); err != nil && !w.Synced() && apierrors.IsNotFound(err) {
		return producerVerdict{verdict: result.VerdictCurrent, note: notCompared + "the cluster does not serve " + key.GVR.Resource}
	}
	ready, forbidden := a.optionalWatchReady(e, w, key.GVR.Resource+namespaceSuffix(ref.Namespace))
	if forbidden != "" {
		return producerVerdict{verdict: result.VerdictCurrent, note: notCompared + forbidden}
	}
	if !ready {
		return producerVerdict{verdict: result.VerdictInProgress, code: code, message: fmt.Sprintf("reading %s, which writes %s", ref.ID(), src.Ref.ID()), atWork: true}
	}
	cached, _ := w.Object(ref.Namespace, ref.Name)
	obj, ok := cached.(*unstructured.Unstructured)
	if !ok {
		return producerVerdict{verdict: result.VerdictInProgress, code: code, message: fmt.Sprintf("waiting for %s, which writes %s: not found", ref.ID(), src.Ref.ID())}
	}
	a.readFrom(ref.ID(), w, obj)
	gen := flux.ReadGenerator(ref, obj)
	inputs, reading, unread := a.generatorInputs(e, gen)
	switch {
	case unread != "":
		return producerVerdict{verdict: result.VerdictCurrent, note: notCompared + unread}
	case reading != "":
		return producerVerdict{verdict: result.VerdictInProgress, code: code, message: fmt.Sprintf("reading %s, a source of %s, which writes %s", reading, ref.ID(), src.Ref.ID()), atWork: true}
	}
	p := producerVerdict{failing: src}
	var until time.Time
	p.verdict, p.code, p.message, until = flux.GeneratorWait(src, gen, inputs, want, a.now)
	if !until.IsZero() {
		e.recheckAt(until)
	}
	if p.verdict == result.VerdictInProgress && !want.IsZero() {
		// A failed build waits for a source to fetch want (flux.GeneratorWait): while one may.
		if v, c, m, _ := flux.GeneratorWait(src, gen, inputs, flux.Revision{}, a.now); v == result.VerdictFailed {
			if bringer := a.bringer(e, gen, src.Ref.Name, inputs, ownerID, want, walk); bringer != "" {
				p.message = fmt.Sprintf("%s; %s may still bring %s, and %s builds again then", p.message, bringer, flux.ShortRevision(want.String()), gen.Ref.ID())
			} else {
				p.verdict, p.code, p.message = v, c, fmt.Sprintf("%s; none of its sources may still bring %s", m, flux.ShortRevision(want.String()))
			}
		}
	}
	if p.verdict == result.VerdictFailed && gen.Rebuilds() {
		p = a.upstreamAtWork(e, gen, inputs, ownerID, want, walk, p)
	}
	if p.verdict == result.VerdictInProgress && !p.atWork {
		if up := a.upstreamWithoutArtifact(e, gen, inputs, ownerID, want, walk); up.verdict == result.VerdictFailed {
			if up.failing.Producer.Name == "" {
				up.failing = src // a source of gen's own
			}
			p = up
		} else {
			p.atWork = gen.Rebuilds() && up.atWork
		}
	}
	if p.verdict != result.VerdictInProgress {
		a.consistent(key, w, ownerID)
		for _, s := range gen.Sources {
			a.consistentSource(s.Ref, ownerID)
		}
		a.consistentSource(src.Ref, ref.ID())
	}
	switch p.verdict {
	case result.VerdictCurrent:
		up := a.upstreamGenerators(e, gen, src.Ref.Name, inputs, ownerID, want, walk)
		if !gen.Rebuilds() {
			// An upstream's change, or a fix on its way to a failed one, reaches src only
			// through a build of gen.
			up.atWork, up.failing, up.via = false, flux.Source{}, nil
		}
		return up
	case result.VerdictInProgress:
		p.failing, p.via = flux.Source{}, nil
	}
	return p
}

// through is p.via for p, the verdict of in, handed on by the generator in is a source of:
// in, when its own generator is not the one that failed, joins the chain.
func through(p producerVerdict, in flux.Source) []flux.Source {
	if p.failing.Producer.Name == "" || p.failing.Ref == in.Ref {
		return p.via
	}
	return append(slices.Clip(p.via), in)
}

// upstreamAtWork holds failed, gen's own failure, while a source of gen is an ExternalArtifact
// whose generator is at work (upstream): gen builds again when that artifact changes, and
// the new one may be what it lacked.
func (a *assessor) upstreamAtWork(e *Assessment, gen flux.Generator, inputs map[string]*flux.Source, ownerID string, want flux.Revision, walk *chainWalk, failed producerVerdict) producerVerdict {
	for _, s := range gen.Sources {
		in := inputs[s.Alias]
		if p, ok := a.upstream(e, in, ownerID, want, walk); ok {
			if why := a.mayChange(e, p, ownerID, want); why != "" {
				return producerVerdict{verdict: result.VerdictInProgress, code: failed.code, atWork: true,
					message: fmt.Sprintf("%s, a source of %s, may change (%s), and %s builds again then, though %s", in.Ref.ID(), gen.Ref.ID(), why, gen.Ref.ID(), failed.message)}
			}
		}
	}
	return failed
}

// mayChange says why the ExternalArtifact judged p (upstream) may still change: its
// generator is at work (p.atWork), or failed while a fix may be on its way to it
// (generatorFixPending, on an applier whose state tells: not blind); "" when it will not.
func (a *assessor) mayChange(e *Assessment, p producerVerdict, ownerID string, want flux.Revision) string {
	switch {
	case p.verdict == result.VerdictInProgress && p.atWork:
		return p.message
	case p.verdict == result.VerdictFailed && p.failing.Producer.Name != "":
		if pending, _, blind := a.generatorFixPending(e, p.failing, ownerID, want); pending != "" && !blind {
			return p.message + "; the fix may be on its way: " + pending
		}
	}
	return ""
}

// upstreamWithoutArtifact judges the sources of gen that have no artifact yet: gen builds
// nothing before each has one (source-watcher's observeSources: "source ... is not ready",
// retried for ever), so the first that will get none fails gen. A Flux source stalled for
// good (artifactNotComing) will not (a suspended one is waited for, as a root on it waits);
// one not found fails it once missing for the not-found grace with nothing creating it
// (missingFinding, as a source a Flux object of the tree needs; meanwhile it waits); an ExternalArtifact, once the generator that writes it
// failed (upstream; failing, the ExternalArtifact whose generator failed; none for a Flux
// source: the caller's own): of those, one with no fix on its way (mayChange) first, whatever
// the order of gen's sources, since gen waits for each; else the first. InProgress otherwise, at work (atWork) when every source is
// found and each without an artifact is on its way: a Flux source neither suspended nor
// stalled, an ExternalArtifact whose generator is at work.
func (a *assessor) upstreamWithoutArtifact(e *Assessment, gen flux.Generator, inputs map[string]*flux.Source, ownerID string, want flux.Revision, walk *chainWalk) producerVerdict {
	atWork := true
	failed := func(message string) producerVerdict {
		return producerVerdict{verdict: result.VerdictFailed, code: result.CodeFluxArtifactFailed, message: message}
	}
	var first *producerVerdict
	for _, s := range gen.Sources {
		in := inputs[s.Alias]
		switch {
		case in == nil:
			atWork = false
			if gvr, ok := s.Ref.GroupVersionResource(); ok {
				key := ListKey{GVR: gvr, Namespace: s.Ref.Namespace}
				w := a.list(key)
				ref := flux.Ref{Kind: flux.Kind(s.Ref.Kind), Namespace: s.Ref.Namespace, Name: s.Ref.Name}
				m := missingObject{id: shownName(s.Ref.ID()), ref: ref, role: " (a source of " + gen.Ref.ID() + ")", needer: ownerID, key: key, list: w,
					hints: closeNames(s.Ref.Namespace, s.Ref.Name, w)}
				if f, final := a.missingFinding(e, m); final {
					return failed(fmt.Sprintf("%s builds nothing before each of its sources has an artifact: %s", gen.Ref.ID(), f.Message))
				}
			}
			continue
		case in.Revision != "":
			continue
		case in.Producer.Name == "":
			if why := a.artifactNotComing(e, in); why != "" {
				return failed(fmt.Sprintf("%s, a source of %s, has no artifact and will get none: it %s; %s builds nothing before each of its sources has one",
					in.Ref.ID(), gen.Ref.ID(), why, gen.Ref.ID()))
			}
			continue
		}
		p, ok := a.upstream(e, in, ownerID, want, walk)
		if ok && p.verdict == result.VerdictFailed {
			p.message = fmt.Sprintf("%s, a source of %s, has no artifact: %s", in.Ref.ID(), gen.Ref.ID(), p.message)
			p.note, p.via = "", through(p, *in)
			if a.mayChange(e, p, ownerID, want) == "" {
				return p // no fix on its way to it: gen builds nothing, whatever comes of the others
			}
			if first == nil {
				first = &p
			}
			continue
		}
		atWork = atWork && ok && p.atWork
	}
	if first != nil {
		return *first
	}
	return producerVerdict{verdict: result.VerdictInProgress, atWork: atWork}
}

// artifactNotComing says why in, a Flux source with no artifact yet, will get none, "" while
// it may still get one: suspended, or stalled for good (a stalled HelmChart is built again
// from its source's next index or artifact, flux.SourceStalled, as stuckReason reads it:
// until then, and while that source is being read, it may).
func (a *assessor) artifactNotComing(e *Assessment, in *flux.Source) string {
	switch {
	case !in.Stalled:
		// (A suspended source is waited for, as a root on it waits: the commit may resume
		// it, through whatever applies it.)
		return ""
	case in.Ref.Kind != "HelmChart":
		return "stalled" + inParentheses(in.Message)
	}
	upstream, _, reading := a.chartUpstream(e, *in)
	if reading {
		return ""
	}
	_, message, stalled, until := flux.SourceStalled(*in, upstream, flux.Revision{}, a.now)
	if !stalled {
		if !until.IsZero() {
			e.recheckAt(until)
		}
		return ""
	}
	return "stalled" + inParentheses(message)
}

// upstreamGenerators judges each source of gen that is an ExternalArtifact of another
// generator by that generator (upstream, one link further). One whose generator failed is
// gen's verdict (failing, the ExternalArtifact whose generator failed), unless a source of
// gen may still bring want to artifact, gen's ExternalArtifact (revisionCarrier): gen builds
// again when it does, and artifact serves want whatever the failed one holds. Of several that
// failed, one artifact takes its revision from first, and of those alike one with no fix on
// its way (mayChange), whatever the order of gen's sources: artifact stays behind it whatever
// comes of the others. Else the first one still at work is gen's verdict; what one could not
// compare is a note.
func (a *assessor) upstreamGenerators(e *Assessment, gen flux.Generator, artifact string, inputs map[string]*flux.Source, ownerID string, want flux.Revision, walk *chainWalk) producerVerdict {
	var failed, waiting *producerVerdict
	failedCarries, failedAlias := false, ""
	// failedStuck says, once asked, whether no fix is on its way to failed (mayChange).
	var failedStuck *bool
	stuck := func(p producerVerdict) *bool {
		b := a.mayChange(e, p, ownerID, want) == ""
		return &b
	}
	aliases := gen.RevisionAliases(artifact)
	var note string
	for _, s := range gen.Sources {
		in := inputs[s.Alias]
		p, ok := a.upstream(e, in, ownerID, want, walk)
		if !ok {
			continue
		}
		note = joinMessage(note, p.note)
		p.message, p.note = fmt.Sprintf("%s, a source of %s: %s", in.Ref.ID(), gen.Ref.ID(), p.message), ""
		if p.verdict == result.VerdictFailed {
			p.via = through(p, *in)
		}
		carries := len(aliases) == 0 || slices.Contains(aliases, s.Alias)
		switch {
		case p.verdict == result.VerdictFailed && (failed == nil || carries && !failedCarries):
			// The one the artifact takes its revision from first: its fix is the one waited for.
			failed, failedCarries, failedAlias, failedStuck = &p, carries, s.Alias, nil
		case p.verdict == result.VerdictFailed && carries == failedCarries:
			// Of two alike, one no fix will reach: gen's artifact stays behind it whatever
			// comes of the other.
			if failedStuck == nil {
				failedStuck = stuck(*failed)
			}
			if !*failedStuck {
				if st := stuck(p); *st {
					failed, failedAlias, failedStuck = &p, s.Alias, st
				}
			}
		case p.verdict == result.VerdictInProgress && (waiting == nil || p.atWork && !waiting.atWork):
			// One at work first: gen's artifact may change through it.
			waiting = &p
		}
	}
	switch {
	case failed != nil:
		// (A fix on its way to the failed one is the caller's to weigh: generatorFixOnItsWay.)
		if carrier := a.revisionCarrier(e, gen, artifact, inputs, failedAlias, ownerID, want, walk); carrier != "" {
			return producerVerdict{verdict: result.VerdictInProgress, code: failed.code, atWork: true, message: fmt.Sprintf("%s, which %s takes its revision from, may still bring %s, though %s",
				carrier, flux.SourceRef{Kind: "ExternalArtifact", Name: artifact, Namespace: gen.Ref.Namespace}.ID(), flux.ShortRevision(want.String()), failed.message)}
		}
		return *failed
	case waiting != nil:
		return *waiting
	}
	return producerVerdict{verdict: result.VerdictCurrent, note: note}
}

// revisionCarrier names a source of gen, other than except (an alias), that its
// ExternalArtifact artifact takes its revision from (flux.Generator.RevisionAliases; any
// source when that is the digest of its content) and that may still bring want (mayBring);
// "" when none may.
func (a *assessor) revisionCarrier(e *Assessment, gen flux.Generator, artifact string, inputs map[string]*flux.Source, except, ownerID string, want flux.Revision, walk *chainWalk) string {
	aliases := gen.RevisionAliases(artifact)
	for _, s := range gen.Sources {
		if s.Alias == except || len(aliases) > 0 && !slices.Contains(aliases, s.Alias) {
			continue
		}
		if in := inputs[s.Alias]; a.mayBring(e, in, ownerID, want, walk) {
			return in.Ref.ID()
		}
	}
	return ""
}

// mayBring reports whether in, a source of a generator of the walk, may still bring want
// (set): a Flux source with an artifact that may still fetch it (flux.MayFetch), or an
// ExternalArtifact that does not serve it and that may change (mayChange: its generator at
// work, or failed with a fix on its way) or, current, has a source the artifact takes its
// revision from that may bring it in turn. Each ExternalArtifact is decided once in a walk;
// a "no" met through a loop cut meanwhile, only while that loop's ends stay on the walk's
// stack (chainWalk.provisional), and reused as the cut it rests on: what is decided from it
// is provisional in turn.
func (a *assessor) mayBring(e *Assessment, in *flux.Source, ownerID string, want flux.Revision, walk *chainWalk) bool {
	switch {
	case in == nil || want.IsZero() || want.Matches(in.Revisions()...):
		return false
	case in.Producer.Name == "":
		return flux.MayFetch(want, a.firstArtifact(*in), *in)
	}
	id := in.Ref.ID()
	if b, decided := walk.brings[id]; decided {
		return b
	}
	if no, ok := walk.provisional[id]; ok && no.epoch == walk.epoch {
		// (The loop it was cut on is still open: what is decided from it is provisional too.)
		walk.cuts++
		walk.low = min(walk.low, no.low)
		return false
	}
	if walk.deciding[id] {
		walk.cuts++
		walk.cutAt["brings "+id] = true
		walk.meet("brings " + id)
		return false
	}
	walk.deciding[id] = true
	walk.seq++
	my := walk.seq
	walk.order["brings "+id] = my
	saveLow := walk.low
	walk.low = 1 << 62
	cuts, epoch := walk.cuts, walk.epoch
	p, ok := a.upstream(e, in, ownerID, want, walk)
	b := false
	switch {
	case !ok:
	case p.verdict == result.VerdictCurrent:
		if up, upInputs, read := a.generatorOf(e, *in); read {
			b = a.revisionCarrier(e, up, in.Ref.Name, upInputs, "", ownerID, want, walk) != ""
		}
	default:
		b = a.mayChange(e, p, ownerID, want) != ""
	}
	delete(walk.deciding, id)
	walk.leave("brings " + id)
	delete(walk.order, "brings "+id)
	low := walk.low
	walk.low = min(saveLow, low)
	switch {
	case b || walk.cuts == cuts || low >= my:
		walk.brings[id] = b
	case walk.epoch == epoch:
		walk.provisional[id] = provisionalNo{epoch: epoch, low: low}
	}
	return b
}

// bringer names a source of gen that may still bring want (mayBring) to artifact, gen's
// ExternalArtifact: a failed build of gen builds again when one does. Only a source artifact
// takes its revision from (flux.Generator.RevisionAliases; any when that is the digest of its
// content), as revisionCarrier: a build on another's new artifact writes artifact under the
// revision it has. "" when none may.
func (a *assessor) bringer(e *Assessment, gen flux.Generator, artifact string, inputs map[string]*flux.Source, ownerID string, want flux.Revision, walk *chainWalk) string {
	aliases := gen.RevisionAliases(artifact)
	for _, s := range gen.Sources {
		if len(aliases) > 0 && !slices.Contains(aliases, s.Alias) {
			continue
		}
		if in := inputs[s.Alias]; a.mayBring(e, in, ownerID, want, walk) {
			return in.Ref.ID()
		}
	}
	return ""
}

// generatorOf reads the ArtifactGenerator that writes the ExternalArtifact src, and its
// sources; ok is false when it or one of its sources cannot be read yet.
func (a *assessor) generatorOf(e *Assessment, src flux.Source) (gen flux.Generator, inputs map[string]*flux.Source, ok bool) {
	ref := src.Producer
	cached, _ := a.list(ListKey{GVR: flux.ArtifactGeneratorGVR, Namespace: ref.Namespace}).Object(ref.Namespace, ref.Name)
	obj, found := cached.(*unstructured.Unstructured)
	if !found {
		return flux.Generator{}, nil, false
	}
	gen = flux.ReadGenerator(ref, obj)
	inputs, reading, unread := a.generatorInputs(e, gen)
	return gen, inputs, reading == "" && unread == ""
}

// generatorInputs reads the sources of gen, by alias (nil for one not found). reading names
// one whose list is on its way, unread says why one cannot be read.
func (a *assessor) generatorInputs(e *Assessment, gen flux.Generator) (inputs map[string]*flux.Source, reading, unread string) {
	inputs = map[string]*flux.Source{}
	for _, s := range gen.Sources {
		in, note := a.source(e, s.Ref)
		gvr, known := s.Ref.GroupVersionResource()
		switch {
		case note != "":
			return nil, "", strings.TrimPrefix(note, "not compared with its source ")
		case !known:
			return nil, "", s.Ref.ID() + " is not a Flux source"
		case in == nil:
			if w := a.list(ListKey{GVR: gvr, Namespace: s.Ref.Namespace}); !w.Synced() {
				return nil, s.Ref.ID(), ""
			}
		default:
			a.firstArtifact(*in) // whether it moves past a revision, from the first look on (flux.MayFetch)
		}
		inputs[s.Alias] = in
	}
	return inputs, "", ""
}

// generatorFixPending says what may still change the ArtifactGenerator that writes the
// ExternalArtifact artifact (its Producer), whose failure would fail ownerID: the Flux object
// that applies it from its own source (its owner labels, flux.ApplierOf; helm-controller's
// too) while it has not applied what that source serves now (flux.ApplyPending), since the
// change merged to fix the generator may be in it, or one that applies that applier in turn
// (applierChainPending: the fix may change the applier's own spec, a HelmRelease's chart or
// values, a Kustomization's path). "" when nothing may: the generator carries no owner label
// (nothing Flux applies it), or its applier is Ready at its generation on its source's
// current artifact, and so is each one up its chain, read no earlier than ownerID's status,
// and that source and the generator no earlier than the applier's (the consistency rule:
// these reads decide the failure), unless that source is one of the generator's own and does
// not serve want yet, nor has moved past it since the run first saw it (flux.FetchPending,
// for artifact: the fix may come with it). An applier or a source that cannot be read yet,
// or may not be read, leaves it pending: the root waits, as it did before its generator was
// judged. An applier that will apply nothing before something other than a commit changes
// (applierStuck) brings no fix: the failure stands, and settled says why, for a person. A
// generator met again while its own fix is judged (an applier that waits for an object of
// an artifact the generator's applier writes too) brings nothing more: Flux waits on itself.
func (a *assessor) generatorFixPending(e *Assessment, artifact flux.Source, ownerID string, want flux.Revision) (pending, settled string, blind bool) {
	ref := artifact.Producer
	if a.judgingFix[ref.ID()] {
		return "", "", false
	}
	if a.judgingFix == nil {
		a.judgingFix = map[string]bool{}
	}
	a.judgingFix[ref.ID()] = true
	defer delete(a.judgingFix, ref.ID())
	genKey := ListKey{GVR: flux.ArtifactGeneratorGVR, Namespace: ref.Namespace}
	genList := a.list(genKey)
	cached, _ := genList.Object(ref.Namespace, ref.Name)
	obj, ok := cached.(*unstructured.Unstructured)
	if !ok {
		return "", "", false
	}
	applier, ok := flux.ApplierOf(obj.GetLabels())
	if !ok {
		return "", "", false
	}
	gen := flux.ReadGenerator(ref, obj)
	id := applier.ID()
	r, pending, served := a.readApplier(e, applier, ref.ID())
	if !served {
		return "", "", false // the cluster does not serve its kind: nothing applies it
	}
	fetch := a.fetchPending(r, gen, artifact.Ref.Name, want)
	if pending != "" {
		why := a.applierStuck(e, r, fetch != "")
		if why == "" {
			return pending, "", a.applierBlind(r)
		}
		a.consistent(r.key, r.list, ownerID)
		if r.obj == nil {
			a.consistent(r.key, r.list, ref.ID()) // (named by the generator's labels)
		}
		a.consistentSource(r.srcRef, id)
		return "", fmt.Sprintf("%s, which applies %s, %s", id, ref.ID(), why), false
	}
	if fetch != "" {
		return fmt.Sprintf("%s, which applies %s, %s", id, ref.ID(), fetch), "", false
	}
	if pending, settled = a.applierChainPending(e, r, gen, artifact.Ref.Name, ownerID, want); pending != "" {
		return pending, "", false
	}
	// The failure rests on r being done with what its source serves, whether the chain above
	// it ends or is stuck.
	a.consistent(r.key, r.list, ownerID)
	a.consistentSource(r.srcRef, id)
	a.consistent(genKey, genList, id)
	return "", settled, false
}

// applierBlind reports whether the state of r, a generator's applier not done, says nothing
// of what it will apply: a ResourceSet (its inputs are not known to carry the fix), its list
// or its source's one the credentials may not read, or its source not found. Not while a
// list is on its way, nor for an applier not found, which is waited for by every object
// within the not-found grace (stuckReason).
func (a *assessor) applierBlind(r applierRead) bool {
	switch {
	case !r.list.Synced():
		return !listMayArrive(r.list)
	case r.obj == nil:
		return false // waited for within the not-found grace (stuckReason), by every object
	case r.ref.Kind != flux.KindKustomization && r.ref.Kind != flux.KindHelmRelease:
		return true
	case r.src == nil:
		gvr, ok := r.srcRef.GroupVersionResource()
		if !ok {
			return true
		}
		w := a.list(ListKey{GVR: gvr, Namespace: r.srcRef.Namespace})
		return w.Synced() || !listMayArrive(w)
	}
	return false
}

// fetchPending is flux.FetchPending for r, an applier of gen's chain, when its source was
// read and has an artifact: what its source, one of gen's own, is still to fetch.
func (a *assessor) fetchPending(r applierRead, gen flux.Generator, artifact string, want flux.Revision) string {
	if r.src == nil || r.src.Revision == "" {
		return ""
	}
	return flux.FetchPending(gen, artifact, a.firstArtifact(*r.src), *r.src, want)
}

// maxApplierChain bounds the appliers applierChainPending follows up from a generator, its
// own applier included: a chain that goes on past it counts as done where the bound ends it.
const maxApplierChain = 8

// applierRead is a Flux object of a generator's applier chain as read: its list, the object
// (nil when not found), its source's reference, and that source (nil when not read).
type applierRead struct {
	ref    flux.Ref
	key    ListKey
	list   List
	obj    *unstructured.Unstructured
	srcRef flux.SourceRef
	src    *flux.Source
}

// readApplier reads applier, which applies below (named for a person: the generator, or the
// applier under it and what that one applies), and its source. pending says what it may
// still apply (flux.ApplyPending; a ResourceSet always may), or that it or its source cannot
// be read yet, or may not be read: either way the fix may still come through it. served is
// false when the cluster does not serve its kind: nothing of that kind applies below.
func (a *assessor) readApplier(e *Assessment, applier flux.Ref, below string) (r applierRead, pending string, served bool) {
	id := applier.ID()
	gvr := applier.Kind.GroupVersionResource()
	r = applierRead{ref: applier, key: ListKey{GVR: gvr, Namespace: applier.Namespace}}
	r.list = a.list(r.key)
	if err := r.list.Err(); err != nil && !r.list.Synced() && apierrors.IsNotFound(err) {
		return r, "", false
	}
	ready, forbidden := a.optionalWatchReady(e, r.list, gvr.Resource+namespaceSuffix(applier.Namespace))
	switch {
	case forbidden != "":
		return r, fmt.Sprintf("%s applies %s, and whether it has applied its source's current artifact is not known: %s", id, below, forbidden), true
	case !ready:
		return r, fmt.Sprintf("reading %s, which applies %s", id, below), true
	}
	cached, _ := r.list.Object(applier.Namespace, applier.Name)
	r.obj, _ = cached.(*unstructured.Unstructured)
	if r.obj != nil {
		a.readFrom(id, r.list, r.obj)
		r.srcRef = flux.SourceOf(applier.Kind, r.obj)
		var unread string
		if r.src, unread = a.source(e, r.srcRef); unread != "" {
			return r, fmt.Sprintf("%s applies %s, and its source cannot be read: %s", id, below, strings.TrimPrefix(unread, "not compared with its source ")), true
		}
		if r.src != nil {
			a.firstArtifact(*r.src) // whether it moves past a revision, from the first look on (flux.FetchPending)
		}
	}
	if r.obj == nil {
		// It may still be created, for the not-found grace (stuckReason).
		return r, fmt.Sprintf("%s, which applies %s, is not found yet", id, below), true
	}
	if pending = flux.ApplyPending(applier, r.obj, r.src); pending != "" {
		return r, fmt.Sprintf("%s, which applies %s, %s", id, below, pending), true
	}
	return r, "", true
}

// applierChainPending walks up from r, the applier of the generator gen, which writes the
// ExternalArtifact named artifact, done with its source's current artifact: the Flux object that
// applies r (r's own owner labels, flux.ApplierOf) applies r's spec from its own source, so a
// fix to that spec reaches r only through it, and so on up. It says what one up the chain is
// still at work to apply (upperMayApply), or that one done with its source waits for that
// source, one of gen's own, to fetch want (flux.FetchPending, as for the first applier), naming
// the chain down to gen; "" when each is done, or when the walk ends: at one that carries no
// owner label, one already met (a loop: flux-system applies itself), one of a kind the cluster
// does not serve, or maxApplierChain, and at one that will apply nothing before something other
// than a commit changes, or whose state cannot be known (upperMayApply): the failure is then the
// verdict, as it was before the chain was followed. Each applier up the chain the walk passes
// counts as a read that decides, read no earlier than ownerID's status, its source and the one
// it applies no earlier than its own.
func (a *assessor) applierChainPending(e *Assessment, r applierRead, gen flux.Generator, artifact, ownerID string, want flux.Revision) (pending, settled string) {
	chain := []applierRead{r}
	seen := map[string]bool{r.ref.ID(): true}
	below := gen.Ref.ID()
	for len(chain) < maxApplierChain && r.obj != nil {
		up, ok := flux.ApplierOf(r.obj.GetLabels())
		if !ok || seen[up.ID()] {
			break
		}
		seen[up.ID()] = true
		below = r.ref.ID() + ", which applies " + below
		next, pending, served := a.readApplier(e, up, below)
		if !served {
			break
		}
		fetch := a.fetchPending(next, gen, artifact, want)
		if pending != "" {
			why := a.stuckReason(e, next, fetch != "")
			if why == "" {
				return pending, ""
			}
			if next.list.Synced() {
				a.consistent(next.key, next.list, ownerID)
				if next.src != nil {
					a.consistentSource(next.srcRef, up.ID())
				}
			}
			settled = fmt.Sprintf("%s, which applies %s, %s", up.ID(), below, why)
			break
		}
		if fetch != "" {
			return fmt.Sprintf("%s, which applies %s, %s", up.ID(), below, fetch), ""
		}
		chain, r = append(chain, next), next
	}
	for i := 1; i < len(chain); i++ {
		upper, lower := chain[i], chain[i-1]
		a.consistent(upper.key, upper.list, ownerID)
		a.consistentSource(upper.srcRef, upper.ref.ID())
		a.consistent(lower.key, lower.list, upper.ref.ID())
	}
	return "", settled
}

// listMayArrive reports whether the first list of w, not there yet, may still come: it is on
// its way, or its last read failed in a way a retry may mend (a 500, a timeout); not when the
// credentials may not read it, or the cluster does not serve it.
func listMayArrive(w List) bool {
	if w.Err() == nil {
		return true
	}
	switch w.Read().Failure.Cause {
	case ReadForbidden, ReadNotServed, ReadUnauthorized, ReadCredentials:
		return false
	}
	return true
}

// stuckReason says why r, an applier of a generator's chain that readApplier found not done,
// will apply nothing that fixes the generator before something other than a commit
// changes, or why its state cannot be known, for a person; "" while it may still apply it:
// while it or its source is being listed, while its source has no artifact yet (unless that
// source is suspended or stalled), while it is at work on its source's current artifact or
// behind it, or failed in a way its controller retries (flux.MayStillApply), for as long as
// a root's would wait for it (the retry grace, awaitGeneration's bound). fetching says that
// its source, one of the generator's own, is still to fetch the revision the root waits for
// (flux.FetchPending): the new artifact requeues it, and its dependencies of that source, so
// only its suspension stops it. Stuck: not found past the not-found grace with nothing
// creating it (a label that names a Kustomization of another cluster, or one deleted), suspended, failed on its source's current artifact, a
// ResourceSet (whose inputs are not known to carry the fix), a list or a source the
// credentials may not read, or waiting for a dependency (spec.dependsOn) that holds it back
// for good (dependencyBlocked). A hold on those would last to the deadline.
func (a *assessor) stuckReason(e *Assessment, r applierRead, fetching bool) string {
	switch {
	case !r.list.Synced():
		if listMayArrive(r.list) {
			return ""
		}
		return "cannot be read: " + r.list.Err().Error()
	case r.obj == nil:
		// Waited for as a missing object the tree needs is (the not-found grace, a Flux
		// object at work that may create it); past that, nothing applies what it applied.
		m := missingObject{id: shownName(r.ref.ID()), ref: r.ref, key: r.key, list: r.list, hints: closeNames(r.ref.Namespace, r.ref.Name, r.list)}
		if _, final := a.missingFinding(e, m); !final {
			return ""
		}
		return "is not found"
	case r.ref.Kind != flux.KindKustomization && r.ref.Kind != flux.KindHelmRelease:
		return "generates it from inputs not known to carry the fix"
	case r.src == nil:
		gvr, ok := r.srcRef.GroupVersionResource()
		if !ok {
			return fmt.Sprintf("applies from %s, not a Flux source", r.srcRef.ID())
		}
		if w := a.list(ListKey{GVR: gvr, Namespace: r.srcRef.Namespace}); !w.Synced() {
			if listMayArrive(w) {
				return ""
			}
			return fmt.Sprintf("applies from %s, which cannot be read: %s", r.srcRef.ID(), w.Err().Error())
		}
		return fmt.Sprintf("applies from %s, which is not found", r.srcRef.ID())
	}
	g := flux.Evaluate(r.ref, r.obj, r.src.Offers(), r.src)
	switch {
	case g.Verdict == result.VerdictSuspended:
		return "is suspended"
	case r.src.Revision == "" && r.src.Suspended:
		return fmt.Sprintf("applies from %s, which has no artifact and is suspended", r.src.Ref.ID())
	case r.src.Revision == "" && r.src.Stalled:
		// A stalled HelmChart is built again from its source's new artifact or index
		// (SourceStalled, as a root's source is judged); a stalled repository never fetches.
		upstream, _, reading := a.chartUpstream(e, *r.src)
		if reading {
			return ""
		}
		_, message, stalled, until := flux.SourceStalled(*r.src, upstream, flux.Revision{}, a.now)
		if !stalled {
			if !until.IsZero() {
				e.recheckAt(until)
			}
			return ""
		}
		return "applies from a source that will serve no artifact: " + message
	case r.src.Revision == "", fetching:
		return ""
	case !flux.MayStillApply(r.ref, r.obj, r.src):
		return "failed on its source's current artifact" + inParentheses(g.Message)
	}
	// A failure its controller retries, or that may be of an older generation, is given the
	// time a root's is (awaitGeneration, graceRetried), and counts once that is over.
	a.awaitGeneration(e, &g, a.now)
	a.graceRetried(e, &g, r.obj, a.now)
	if g.Verdict != result.VerdictInProgress {
		return "still fails past its retries" + inParentheses(g.Message)
	}
	if chain := a.dependencyBlocked(e, r, g); chain != "" {
		return "waits for " + chain
	}
	return ""
}

// inParentheses is a Flux message in parentheses after a space, "" for none.
func inParentheses(message string) string {
	if message == "" {
		return ""
	}
	return " (" + message + ")"
}

// applierStuck is stuckReason for the generator's own applier r, found and its source read,
// or not found in a list read: suspended, failed on that artifact in a way its controller
// does not retry (or past the time a root's retried failure is given), held back for good
// by a dependency, or not found past the not-found grace with nothing creating it. A source
// not found, what the credentials may not read and a ResourceSet hold here as they did
// before the chain was followed: what comes next is not known, and the root's failure
// would be a guess.
func (a *assessor) applierStuck(e *Assessment, r applierRead, fetching bool) string {
	if r.obj == nil && !r.list.Synced() || r.obj != nil && (r.src == nil || (r.ref.Kind != flux.KindKustomization && r.ref.Kind != flux.KindHelmRelease)) {
		return ""
	}
	return a.stuckReason(e, r, fetching)
}

// dependencyBlocked names the dependency, and the way down to it, that holds r, an applier
// of a generator's chain whose gate for its source's current artifact is g, back for good: r waits for it (Ready=False DependencyNotReady on
// its spec.dependsOn), and it holds r back by the rule a root's dependencies are judged by
// (blockedBy: failed past its retries, suspended short of Ready, to any depth), so that r
// applies nothing, the fix included, until something other than a commit changes. "" for
// none. The dependency's read then decides, and is read no earlier than r's status. A
// dependency not found holds it back for good past the not-found grace, with nothing
// creating it (blockedBy, missingFinding); it is no object the run was asked about, and no
// NotFound of the run.
func (a *assessor) dependencyBlocked(e *Assessment, r applierRead, g flux.Gate) string {
	if g.Verdict != result.VerdictInProgress || g.Code != result.CodeFluxDependencyNotReady {
		return ""
	}
	chain, _, _ := a.blockedBy(e, g, r.src.Offers(), a.now, map[string]bool{}, map[string]bool{}, map[string]bool{r.ref.ID(): true}, false)
	return chain
}
