// Package store holds what every storage engine shares: the key that seals secrets at rest
// (Sealer) and the files that keep keys (LoadOrCreateKey, WriteFileOnce, ReadSecretFile).
// The engines are its subpackages: store/bolt (the default, one bbolt file) and
// store/postgres (several instances on one PostgreSQL); store/storetest is the conformance
// suite both pass. Only main.go chooses an engine; everything else sees the interfaces
// declared in rules/.
package store
