package testbed

import "context"

// StartControllerWith lets the tests start a controller with flags of their own.
func (c *Cluster) StartControllerWith(ctx context.Context, name string, extra func() ([]string, error)) error {
	return c.startControllerWith(ctx, name, extra)
}
