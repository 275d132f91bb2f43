// Package sandbox is what stands in for the outside world when the server runs with
// --sandbox: the simulated rail, the clock a test moves, the merchants' scripted outcomes and
// the simulated directory. Each sits behind an interface of rules, where a real connector
// would. It imports only the standard library and rules.
package sandbox
