package api

import (
	"bytes"
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"payouts/rules"
)

// Batches: the signed operations of a merchant's batches, our own
// extension of the original API.

// BatchView is a batch as the API answers it.
type BatchView struct {
	ID          int64              `json:"id"`
	BatchID     string             `json:"batchId"`
	Status      string             `json:"status" enum:"INVALID,DRAFT,APPROVED,PROCESSING,COMPLETED"`
	MadeBy      string             `json:"madeBy" doc:"Who uploaded it: key:<keyId> or dashboard:<principal>"`
	ApprovedBy  *string            `json:"approvedBy"`
	CreatedAt   string             `json:"createdAt"`
	ApprovedAt  *string            `json:"approvedAt"`
	CompletedAt *string            `json:"completedAt" doc:"When every item was created as a payout or refused"`
	NotifiedAt  *string            `json:"notifiedAt" doc:"When every item reached a final stage (the batch notification)"`
	Counts      rules.BatchCounts  `json:"counts"`
	Totals      []rules.BatchTotal `json:"totals" doc:"By currency, of the valid items; paid: of those in stage SUCCESS"`
	Errors      []rules.BatchError `json:"errors" doc:"Every error of every item (INVALID); item counts from 1"`
}

// BatchItemView is one item of a batch.
type BatchItemView struct {
	Item     int               `json:"item"`
	OrderID  string            `json:"orderId"`
	PayoutID *int64            `json:"payoutId" doc:"The payout it became; null until created"`
	Currency string            `json:"currency,omitempty"`
	Amount   int64             `json:"amount,omitempty"`
	Stage    string            `json:"stage,omitempty" doc:"Its payout's stage"`
	Status   string            `json:"status" doc:"Its payout's status; REFUSED when its creation was refused; NOT_CREATED before"`
	Error    *rules.BatchError `json:"error,omitempty" doc:"Why its creation was refused"`
	Kind     string            `json:"kind" enum:"payout,link" doc:"link: an item without destination, created as a payout link (POST /payouts/link): GET /payouts/{id} shows its link"`
}

func optTime(t interface{ IsZero() bool }, s string) *string {
	if t.IsZero() {
		return nil
	}
	return &s
}

// BatchViewOf is the view of b with its items (nil: only what the batch record says).
func BatchViewOf(b *rules.Batch, items []rules.BatchItem) BatchView {
	counts, totals := rules.Summarize(b, items)
	if items == nil && b.Status != rules.BatchInvalid {
		counts.Pending = counts.Valid
	}
	v := BatchView{ID: b.ID, BatchID: b.BatchID, Status: string(b.Status), MadeBy: b.MadeBy, CreatedAt: wireTime(b.CreatedAt),
		ApprovedAt: optTime(b.ApprovedAt, wireTime(b.ApprovedAt)), CompletedAt: optTime(b.CompletedAt, wireTime(b.CompletedAt)),
		NotifiedAt: optTime(b.NotifiedAt, wireTime(b.NotifiedAt)), Counts: counts, Totals: totals, Errors: b.Errors}
	if b.ApprovedBy != "" {
		v.ApprovedBy = &b.ApprovedBy
	}
	if v.Totals == nil {
		v.Totals = []rules.BatchTotal{}
	}
	if v.Errors == nil {
		v.Errors = []rules.BatchError{}
	}
	return v
}

// ItemStatus is what the items listing says of an item's state.
func ItemStatus(it *rules.BatchItem) string {
	switch {
	case it.PayoutID != 0:
		return string(it.Status)
	case it.Code != "":
		return "REFUSED"
	}
	return "NOT_CREATED"
}

func itemView(it *rules.BatchItem) BatchItemView {
	v := BatchItemView{Item: it.Seq, OrderID: it.OrderID, Currency: it.Currency, Amount: it.Amount, Stage: string(it.Stage), Status: ItemStatus(it),
		Kind: itemKind(it)}
	if it.PayoutID != 0 {
		id := it.PayoutID
		v.PayoutID = &id
	}
	if it.Code != "" {
		v.Error = &rules.BatchError{Item: it.Seq, Code: it.Code, Location: it.Location, Message: it.Message}
	}
	return v
}

func itemKind(it *rules.BatchItem) string {
	if it.Link {
		return "link"
	}
	return "payout"
}

// BatchResultCSV writes items as the result CSV: one row an item, with its payout or error.
func BatchResultCSV(items []rules.BatchItem) []byte {
	var buf bytes.Buffer
	w := rules.NewCSVWriter(&buf)
	w.Write([]string{"item", "orderId", "payoutId", "currency", "amount", "stage", "status", "errorCode", "errorLocation", "errorMessage", "kind"})
	for i := range items {
		it := &items[i]
		pid := ""
		if it.PayoutID != 0 {
			pid = itoa(it.PayoutID)
		}
		w.Write([]string{strconv.Itoa(it.Seq), it.OrderID, pid, it.Currency, itoa(it.Amount), string(it.Stage), ItemStatus(it), it.Code, it.Location, it.Message, itemKind(it)})
	}
	w.Flush()
	return buf.Bytes()
}

// BatchNotificationJSON is the body of a batch's notification: the batch as GET answers it,
// with the type of the event.
func BatchNotificationJSON(b *rules.Batch, items []rules.BatchItem) ([]byte, error) {
	return json.Marshal(struct {
		Type  string    `json:"type"`
		Batch BatchView `json:"batch"`
	}{"batch.COMPLETED", BatchViewOf(b, items)})
}

// BatchNotification is the notification body, for the document's webhook.
type BatchNotification struct {
	Type  string    `json:"type" enum:"batch.COMPLETED"`
	Batch BatchView `json:"batch"`
}

// batchNotificationExample is a real batch (the get-batch answer example) as its notification.
func batchNotificationExample() map[string]*huma.Example {
	b, err := answers.ReadFile("examples/get-batch.200.json")
	if err != nil {
		return map[string]*huma.Example{}
	}
	v := json.RawMessage(`{"type":"batch.COMPLETED","batch":` + string(b) + `}`)
	return map[string]*huma.Example{"completed": {Summary: "A batch of two items, both paid", Value: v}}
}

// isBatchCreate says whether a request is a batch upload, which has its own body limit and
// may be CSV.
func isBatchCreate(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/api/v1/") && signedRest(r.URL.Path) == "batches"
}

func isCSV(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "text/csv"
}

type createBatchIn struct {
	MerchantID  string `path:"merchantId"`
	BatchID     string `query:"batchId" doc:"The batch's id, for a CSV body (a JSON body carries it)"`
	ContentType string `header:"Content-Type"`
	RawBody     []byte
}

type batchOut struct {
	Status   int
	Replayed string `header:"Idempotent-Replayed"`
	Location string `header:"Location"`
	Body     BatchView
}

type batchIn struct {
	MerchantID string `path:"merchantId"`
	ID         int64  `path:"id"`
}

type itemsIn struct {
	MerchantID string `path:"merchantId"`
	ID         int64  `path:"id"`
	Status     string `query:"status" doc:"Only items of this payout status or stage, REFUSED, or NOT_CREATED"`
	After      int    `query:"after" minimum:"0" doc:"nextCursor of the previous page: items after this item number"`
	Limit      int    `query:"limit" minimum:"1" maximum:"10000" default:"100"`
	Accept     string `header:"Accept"`
}

type rawOut struct {
	ContentType        string `header:"Content-Type"`
	ContentDisposition string `header:"Content-Disposition"`
	Body               []byte
}

// ItemsPage is one page of a batch's items.
type ItemsPage struct {
	Items      []BatchItemView `json:"items"`
	NextCursor *string         `json:"nextCursor"`
}

// BatchPage is one page of a merchant's batches.
type BatchPage struct {
	Items      []BatchView `json:"items"`
	NextCursor *string     `json:"nextCursor"`
}

// principalOf is the batch principal of a signed request: its key.
func principalOf(ctx context.Context) string {
	if s := signerFrom(ctx); s != nil {
		return rules.KeyPrincipal(s.KeyID)
	}
	return ""
}

func registerBatches(a huma.API, d Deps) {
	bs := d.Batches
	itemSchema := a.OpenAPI().Components.Schemas.Schema(reflect.TypeOf(rules.PayoutRequest{}), true, "PayoutRequest")
	csvHeader := "country,currency,amount,orderId,beneficiary.name,beneficiary.lastName,beneficiary.email,beneficiary.document.type,beneficiary.document.number,destination.bankAccount.bankCode,destination.bankAccount.accountType,destination.bankAccount.accountNumber\n"
	csvExample := csvHeader + "PER,PEN,100000,PAY-0001,Ana,Quispe,ana.quispe@gmail.com,1,45678912,002,2,19312345678012\n" +
		"PER,PEN,250000,PAY-0002,Luis,Rojas,,1,41234567,002,2,19312345678013\n"
	jsonExample := json.RawMessage(`{"batchId":"payroll-2026-11","items":[{"country":"PER","currency":"PEN","amount":100000,"orderId":"PAY-0001","beneficiary":{"name":"Ana","lastName":"Quispe","email":"ana.quispe@gmail.com","document":{"type":1,"number":"45678912"}},"destination":{"bankAccount":{"bankCode":"002","accountType":2,"accountNumber":"19312345678012"}}}]}`)
	body := &huma.RequestBody{Required: true, Description: "The batch: JSON {batchId, items}, or CSV with ?batchId= (a header row of dotted field names, one row an item; an empty cell leaves its field out)",
		Content: map[string]*huma.MediaType{
			"application/json": {Schema: &huma.Schema{Type: "object", Required: []string{"batchId", "items"}, Properties: map[string]*huma.Schema{
				"batchId": {Type: "string", MinLength: ptr(1), MaxLength: ptr(40), Description: "The merchant's id of the batch: the same batchId with the same items is the same batch"},
				// An item that breaks the request schema is reported in the answer's errors (its
				// item, code and location), not refused: hence any object besides PayoutRequest.
				"items": {Type: "array", MinItems: ptr(1), MaxItems: ptr(rules.MaxBatchItems),
					Description: "Payout requests (PayoutRequest); an item that breaks the schema or the rules is reported in errors, with its item number",
					Items:       &huma.Schema{AnyOf: []*huma.Schema{itemSchema, {Type: "object"}}}},
			}}, Examples: map[string]*huma.Example{"payroll": {Summary: "A one-item payroll", Value: jsonExample}}},
			"text/csv": {Schema: &huma.Schema{Type: "string"}, Examples: map[string]*huma.Example{"payroll": {Summary: "Two items as CSV (?batchId=payroll-2026-11)", Value: csvExample}}},
		}}
	viewSchema := a.OpenAPI().Components.Schemas.Schema(reflect.TypeOf(BatchView{}), true, "Batch")
	huma.Register(a, huma.Operation{
		OperationID: "create-batch", Method: http.MethodPost, Path: "/api/v1/{merchantId}/batches",
		Summary: "Upload a batch of payouts",
		Description: "Checks every item with the rules of a single create (every error of every item, with its item number from 1, code, location and message), " +
			"orderIds repeated in the batch (2918) or already used by a payout (2919). Answers 201 with status DRAFT when all pass, INVALID otherwise (nothing is created; the report stays readable). " +
			"Idempotent on batchId: the same items again answer 200 with the same batch (Idempotent-Replayed: true); other items under that batchId answer 409 (2916). " +
			"Up to 10,000 items and 10 MiB (413, 2917). A DRAFT batch's items become payouts once a checker approves it.",
		Tags: []string{"Batches"}, DefaultStatus: http.StatusCreated, MaxBodyBytes: rules.MaxBatchBody,
		RequestBody: body, SkipValidateBody: true, Security: signedSecurity,
		Extensions: map[string]any{"x-payouts-extension": true},
		Errors:     []int{400, 401, 403, 409, 413, 415, 429, 503},
	}, func(ctx context.Context, in *createBatchIn) (*batchOut, error) {
		m := merchantFrom(ctx)
		var req rules.BatchRequest
		var err error
		if isCSV(in.ContentType) {
			req.Items, err = rules.ParseBatchCSV(bytes.NewReader(in.RawBody))
			req.BatchID = in.BatchID
		} else {
			req, err = rules.ParseBatchJSON(in.RawBody)
			if err == nil && req.BatchID == "" {
				req.BatchID = in.BatchID
			}
		}
		if err != nil {
			return nil, err
		}
		b, created, err := bs.Create(ctx, m, req, principalOf(ctx))
		if err != nil {
			return nil, err
		}
		out := &batchOut{Status: http.StatusCreated, Body: BatchViewOf(b, nil), Location: "/api/v1/" + m.ID + "/batches/" + itoa(b.ID)}
		if !created {
			out.Status, out.Replayed = http.StatusOK, "true"
			if b.Status != rules.BatchDraft && b.Status != rules.BatchInvalid {
				items, err := bs.Store.BatchItems(ctx, m.ID, b.ID, 0, 0)
				if err != nil {
					return nil, err
				}
				out.Body = BatchViewOf(b, items)
			}
		}
		return out, nil
	})

	if op := a.OpenAPI().Paths["/api/v1/{merchantId}/batches"].Post; op != nil && op.Responses["201"] != nil {
		replay := *op.Responses["201"]
		replay.Description = "The same batchId with the same items again: the same batch, with Idempotent-Replayed: true"
		op.Responses["200"] = &replay
	}

	huma.Register(a, huma.Operation{
		OperationID: "approve-batch", Method: http.MethodPost, Path: "/api/v1/{merchantId}/batches/{id}/approve",
		Summary:     "Approve a DRAFT batch",
		Description: "By a checker or full key that is not the key that uploaded it (403 2915; a maker or read key: 403 2913). The batch becomes APPROVED, then PROCESSING while its items are created as payouts, each exactly once by its orderId, then COMPLETED. Only a DRAFT batch can be approved (409 2922).",
		Tags:        []string{"Batches"}, Security: signedSecurity, Extensions: map[string]any{"x-payouts-extension": true},
		Errors: []int{400, 401, 403, 404, 409, 429, 503},
	}, func(ctx context.Context, in *batchIn) (*struct{ Body BatchView }, error) {
		b, err := bs.Approve(ctx, merchantFrom(ctx).ID, in.ID, principalOf(ctx))
		if err != nil {
			return nil, err
		}
		if d.Auditor != nil {
			// The signed API has no actor in its context (payout creates are not audited);
			// an approval is, as the key that made it (the maker-checker trail: who approved).
			addr, _ := clientAddrOf(ctx)
			d.Auditor.Record(ctx, rules.Actor{Principal: b.ApprovedBy, Name: "API key " + strings.TrimPrefix(b.ApprovedBy, "key:")}, addr, "",
				"batch.approve", "batch:"+strconv.FormatInt(b.ID, 10), b.MerchantID, map[string]any{"batchId": b.BatchID, "items": b.Items, "madeBy": b.MadeBy})
		}
		return &struct{ Body BatchView }{BatchViewOf(b, nil)}, nil
	})

	huma.Register(a, huma.Operation{
		OperationID: "get-batch", Method: http.MethodGet, Path: "/api/v1/{merchantId}/batches/{id}",
		Summary: "Get a batch: its status, items counted by payout stage and status, totals by currency",
		Tags:    []string{"Batches"}, Security: signedSecurity, Extensions: map[string]any{"x-payouts-extension": true},
		Errors: []int{400, 401, 404, 429, 503},
	}, func(ctx context.Context, in *batchIn) (*struct{ Body BatchView }, error) {
		m := merchantFrom(ctx)
		b, err := bs.Get(ctx, m.ID, in.ID)
		if err != nil {
			return nil, err
		}
		items, err := bs.Store.BatchItems(ctx, m.ID, b.ID, 0, 0)
		if err != nil {
			return nil, err
		}
		return &struct{ Body BatchView }{BatchViewOf(b, items)}, nil
	})

	type listIn struct {
		MerchantID string `path:"merchantId"`
		Cursor     string `query:"cursor" doc:"nextCursor of the previous page"`
		Limit      int    `query:"limit" minimum:"1" maximum:"200" default:"50"`
	}
	huma.Register(a, huma.Operation{
		OperationID: "list-batches", Method: http.MethodGet, Path: "/api/v1/{merchantId}/batches",
		Summary: "List the merchant's batches, oldest first (counts as uploaded; GET one for its progress)",
		Tags:    []string{"Batches"}, Security: signedSecurity, Extensions: map[string]any{"x-payouts-extension": true},
		Errors: []int{400, 401, 429, 503},
	}, func(ctx context.Context, in *listIn) (*struct{ Body BatchPage }, error) {
		m := merchantFrom(ctx)
		var after int64
		if in.Cursor != "" {
			n, err := strconv.ParseInt(in.Cursor, 10, 64)
			if err != nil || n < 0 {
				return nil, &rules.Error{Kind: rules.KindInvalid, Code: rules.CodeBatchBody, Field: "cursor", Value: in.Cursor, Message: "cursor must be a nextCursor this listing gave"}
			}
			after = n
		}
		list, err := bs.Store.Batches(ctx, m.ID, after, in.Limit+1)
		if err != nil {
			return nil, err
		}
		page := BatchPage{Items: []BatchView{}}
		for i, b := range list {
			if i == in.Limit {
				next := itoa(list[i-1].ID)
				page.NextCursor = &next
				break
			}
			page.Items = append(page.Items, BatchViewOf(b, nil))
		}
		return &struct{ Body BatchPage }{page}, nil
	})

	itemsSchema := a.OpenAPI().Components.Schemas.Schema(reflect.TypeOf(ItemsPage{}), true, "BatchItemsPage")
	csvContent := map[string]*huma.MediaType{"text/csv": {Schema: &huma.Schema{Type: "string", Description: "item,orderId,payoutId,currency,amount,stage,status,errorCode,errorLocation,errorMessage"}}}
	huma.Register(a, huma.Operation{
		OperationID: "list-batch-items", Method: http.MethodGet, Path: "/api/v1/{merchantId}/batches/{id}/items",
		Summary:     "List a batch's items with their payouts or errors (JSON, or CSV with Accept: text/csv)",
		Description: "Each item with its orderId, the payout it became and its status, or why its creation was refused. Accept: text/csv answers the result CSV of the page.",
		Tags:        []string{"Batches"}, Security: signedSecurity, Extensions: map[string]any{"x-payouts-extension": true},
		Responses: map[string]*huma.Response{"200": {Description: "One page of items", Content: map[string]*huma.MediaType{
			"application/json": {Schema: itemsSchema}, "text/csv": csvContent["text/csv"]}}},
		Errors: []int{400, 401, 404, 429, 503},
	}, func(ctx context.Context, in *itemsIn) (*rawOut, error) {
		m := merchantFrom(ctx)
		if _, err := bs.Get(ctx, m.ID, in.ID); err != nil {
			return nil, err
		}
		all, err := bs.Store.BatchItems(ctx, m.ID, in.ID, in.After, 0)
		if err != nil {
			return nil, err
		}
		var kept []rules.BatchItem
		next := ""
		for i := range all {
			it := &all[i]
			if in.Status != "" && ItemStatus(it) != in.Status && string(it.Stage) != in.Status {
				continue
			}
			if len(kept) == in.Limit {
				next = strconv.Itoa(kept[len(kept)-1].Seq)
				break
			}
			kept = append(kept, *it)
		}
		if prefersCSV(in.Accept) {
			return &rawOut{ContentType: "text/csv; charset=utf-8", Body: BatchResultCSV(kept)}, nil
		}
		page := ItemsPage{Items: make([]BatchItemView, 0, len(kept))}
		for i := range kept {
			page.Items = append(page.Items, itemView(&kept[i]))
		}
		if next != "" {
			page.NextCursor = &next
		}
		b, err := json.Marshal(page)
		if err != nil {
			return nil, err
		}
		return &rawOut{ContentType: "application/json", Body: b}, nil
	})

	huma.Register(a, huma.Operation{
		OperationID: "batch-result-csv", Method: http.MethodGet, Path: "/api/v1/{merchantId}/batches/{id}/result.csv",
		Summary: "The batch's result as CSV: every item with its payout or error",
		Tags:    []string{"Batches"}, Security: signedSecurity, Extensions: map[string]any{"x-payouts-extension": true},
		Responses: map[string]*huma.Response{"200": {Description: "The result CSV", Content: csvContent}},
		Errors:    []int{400, 401, 404, 429, 503},
	}, func(ctx context.Context, in *batchIn) (*rawOut, error) {
		m := merchantFrom(ctx)
		b, err := bs.Get(ctx, m.ID, in.ID)
		if err != nil {
			return nil, err
		}
		items, err := bs.Store.BatchItems(ctx, m.ID, in.ID, 0, 0)
		if err != nil {
			return nil, err
		}
		return &rawOut{ContentType: "text/csv; charset=utf-8", ContentDisposition: `attachment; filename="batch-` + itoa(b.ID) + `.csv"`,
			Body: BatchResultCSV(items)}, nil
	})
	_ = viewSchema

	if hooks := a.OpenAPI().Webhooks; hooks != nil {
		hooks["batch-completed"] = &huma.PathItem{Post: &huma.Operation{
			OperationID: "batch-completed-notification",
			Summary:     "Batch completed: every item reached a final stage, POSTed to the merchant's notificationUrl",
			Description: "Sent once per batch (event id batch.notification.b<id>.COMPLETED, type batch.COMPLETED), when every item's payout is SUCCESS or REJECTED or its creation was refused; " +
				"signed and retried as the payout notifications are, and kept in the event log.",
			Tags:       []string{"Notifications"},
			Extensions: map[string]any{"x-payouts-extension": true},
			Parameters: []*huma.Param{
				{Name: "verification", In: "header", Required: true, Schema: &huma.Schema{Type: "string"}, Description: "base64 signature of merchantId + body"},
				{Name: "Idempotency-Key", In: "header", Required: true, Schema: &huma.Schema{Type: "string"}, Description: "The event id, the same on every copy"},
			},
			RequestBody: &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{"application/json": {
				Schema:   a.OpenAPI().Components.Schemas.Schema(reflect.TypeOf(BatchNotification{}), true, "BatchNotification"),
				Examples: batchNotificationExample()}}},
			Responses: map[string]*huma.Response{"200": {Description: "Any 2xx marks the notification delivered"}},
		}}
	}
}
