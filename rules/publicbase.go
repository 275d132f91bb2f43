package rules

import "context"

type publicBaseKey struct{}

// WithPublicBase records the absolute base URL (scheme://host) a request reached the service
// at, as a trusted proxy forwarded it, for the links the service hands out (the card iframe).
func WithPublicBase(ctx context.Context, base string) context.Context {
	return context.WithValue(ctx, publicBaseKey{}, base)
}

// PublicBase is the base URL WithPublicBase recorded, or "".
func PublicBase(ctx context.Context) string {
	b, _ := ctx.Value(publicBaseKey{}).(string)
	return b
}
