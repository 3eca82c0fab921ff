package testbed

// createArgs returns the kwokctl create flags the options add to the bed's defaults.
func (o Options) createArgs() []string {
	var args []string
	if o.ControlPlaneOnly {
		args = append(args, "--disable", "kube-controller-manager,kube-scheduler,kwok-controller")
	}
	for _, a := range o.APIServerArgs {
		args = append(args, "--extra-args", "kube-apiserver="+a)
	}
	return args
}

// nodes is how many simulated nodes a cluster gets: none without kwok, which makes them Ready.
func (o Options) nodes() int {
	if o.ControlPlaneOnly {
		return 0
	}
	return o.Nodes
}
