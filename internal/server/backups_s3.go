package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// The off-site copies of the scheduled backups, and where `payouts restore` fetches one:
// S3 or any service speaking its API (MinIO, Ceph, R2, B2…), through minio-go.

// S3Source is where backups are kept in S3: a bucket, the service that holds it and the
// credentials to reach it.
type S3Source struct {
	client *minio.Client
	bucket string
	where  string // s3://bucket/prefix, for messages
	keyID  string // the access key id, never shown in a message
}

// S3Access is how to reach an S3-compatible service: what the --backup-s3-endpoint and
// --backup-s3-credentials-file flags say; the rest comes from the environment.
type S3Access struct {
	// Endpoint is the service's URL (http or https, no path); empty is AWS S3.
	Endpoint string
	// CredentialsFile is an AWS shared credentials file; empty takes AWS_ACCESS_KEY_ID and
	// AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN) from the environment.
	CredentialsFile string
}

// ParseS3URL splits s3://bucket/key into the bucket and the key (which may be empty).
func ParseS3URL(raw string) (bucket, key string, err error) {
	rest, ok := strings.CutPrefix(raw, "s3://")
	if !ok {
		if strings.Contains(raw, "@") {
			raw = "(not shown: it may hold credentials)"
		}
		return "", "", fmt.Errorf("%q is not an s3://bucket/prefix URL", raw)
	}
	bucket, key, _ = strings.Cut(rest, "/")
	if strings.ContainsAny(bucket, "@:") {
		// s3://KEY:SECRET@bucket: the URL would end up in the log and in messages (and is
		// never shown here); the credentials have their own file.
		return "", "", errors.New("put no credentials in the s3:// URL (not shown): give --backup-s3-credentials-file " +
			"or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	if bucket == "" {
		return "", "", fmt.Errorf("%q names no bucket: s3://bucket/prefix", raw)
	}
	if strings.ContainsAny(raw, "?#") || strings.Contains(key, "//") {
		return "", "", fmt.Errorf("%q: a bucket and a key, without a query, a fragment or empty path segments", raw)
	}
	return bucket, key, nil
}

// OpenS3 reaches the bucket of an s3:// URL. getenv gives AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_PROFILE and AWS_REGION. Nothing is sent yet:
// a wrong credential shows on the first request.
func OpenS3(rawURL string, access S3Access, getenv func(string) string) (*S3Source, string, error) {
	bucket, key, err := ParseS3URL(rawURL)
	if err != nil {
		return nil, "", err
	}
	host, secure, err := s3Endpoint(access.Endpoint)
	if err != nil {
		return nil, "", err
	}
	creds, keyID, err := s3Credentials(access.CredentialsFile, getenv)
	if err != nil {
		return nil, "", err
	}
	region := getenv("AWS_REGION")
	if region == "" {
		region = getenv("AWS_DEFAULT_REGION")
	}
	if region == "" {
		// Every S3-compatible service takes it, and it spares a request for the bucket's
		// location before the first upload.
		region = "us-east-1"
	}
	client, err := minio.New(host, &minio.Options{Creds: creds, Secure: secure, Region: region, MaxRetries: 3})
	if err != nil {
		return nil, "", fmt.Errorf("--backup-s3-endpoint: %w", err)
	}
	return &S3Source{client: client, bucket: bucket, where: "s3://" + bucket, keyID: keyID}, key, nil
}

// s3Endpoint is the host and whether to use TLS of an endpoint URL; empty is AWS S3.
func s3Endpoint(raw string) (host string, secure bool, err error) {
	if raw == "" {
		return "s3.amazonaws.com", true, nil
	}
	u, err := url.Parse(raw)
	bad := err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != ""
	if bad {
		return "", false, fmt.Errorf("--backup-s3-endpoint %q: want the service's URL, http(s)://host[:port], without a path", raw)
	}
	if u.User != nil {
		// A URL with a password ends up in messages; the credentials have their own file.
		return "", false, errors.New("--backup-s3-endpoint: put no credentials in the URL: give --backup-s3-credentials-file or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	return u.Host, u.Scheme == "https", nil
}

// s3Credentials reads the credentials once, so that a missing or unreadable one is an error
// at start rather than at the first backup. A credentials file is read again when its
// credentials are needed anew, so that rotating it needs no restart.
func s3Credentials(file string, getenv func(string) string) (*credentials.Credentials, string, error) {
	if file == "" {
		id, secret := getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY")
		if id == "" || secret == "" {
			return nil, "", errors.New("no S3 credentials: give --backup-s3-credentials-file (an AWS shared credentials file) " +
				"or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
		}
		return credentials.NewStaticV4(id, secret, getenv("AWS_SESSION_TOKEN")), id, nil
	}
	if _, err := os.Stat(file); err != nil {
		return nil, "", fmt.Errorf("--backup-s3-credentials-file: %w", err)
	}
	profile := getenv("AWS_PROFILE")
	if profile == "" {
		profile = "default"
	}
	creds := credentials.NewFileAWSCredentials(file, profile)
	// The parser's own error may quote a line of the file, which may be the secret.
	v, err := creds.GetWithContext(nil)
	if err != nil || v.AccessKeyID == "" || v.SecretAccessKey == "" {
		return nil, "", fmt.Errorf("--backup-s3-credentials-file %s: want an AWS shared credentials file whose [%s] section "+
			"holds aws_access_key_id and aws_secret_access_key (AWS_PROFILE names another section)", file, profile)
	}
	return creds, v.AccessKeyID, nil
}

// maxQuoted is how much of an S3 error's message a message of ours quotes.
const maxQuoted = 100

// echoedHeader finds what only a request's signing headers hold: a service that echoes the
// request in its error would otherwise put the access key id and the signature into the log
// and the restore's message.
var echoedHeader = regexp.MustCompile(`(?i)authorization|credential|signature|x-amz-|aws4-hmac`)

// s3Error says what went wrong with op: for an answer of the service, its status, its code
// and at most a short, escaped part of its message, none of it when it echoes the request's
// credentials; the answer's body could be anything the service sends.
func (s *S3Source) s3Error(op string, err error) error {
	var answer minio.ErrorResponse
	if !errors.As(err, &answer) || answer.StatusCode == 0 {
		return fmt.Errorf("%s: %w", op, err)
	}
	return fmt.Errorf("%s: the service answered %d %s: %s", op, answer.StatusCode, s.quoted(answer.Code), s.quoted(answer.Message))
}

// quoted is text of the service as a message may show it.
func (s *S3Source) quoted(text string) string {
	if echoedHeader.MatchString(text) || (s.keyID != "" && strings.Contains(text, s.keyID)) {
		return "(not shown: it echoes the request's credentials)"
	}
	if r := []rune(text); len(r) > maxQuoted {
		text = string(r[:maxQuoted]) + "…"
	}
	return strconv.Quote(text)
}

// Where is the source's s3://bucket, for messages.
func (s *S3Source) Where() string { return s.where }

// Upload copies the file at path to key.
func (s *S3Source) Upload(ctx context.Context, path, key string) error {
	_, err := s.client.FPutObject(ctx, s.bucket, key, path, minio.PutObjectOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return s.s3Error(fmt.Sprintf("upload to %s/%s", s.where, key), err)
	}
	return nil
}

// Download writes the object key to w: at most the size the service lists for it (size,
// from a listing; below 0, asked), so that a service that keeps sending cannot fill the disk.
func (s *S3Source) Download(ctx context.Context, key string, size int64, w io.Writer) (int64, error) {
	op := fmt.Sprintf("download %s/%s", s.where, key)
	if size < 0 {
		info, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
		if err != nil {
			return 0, s.s3Error(op, err)
		}
		size = info.Size
	}
	obj, err := s.client.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return 0, s.s3Error(op, err)
	}
	defer obj.Close()
	n, err := io.Copy(w, io.LimitReader(obj, size+1))
	if err != nil {
		return n, s.s3Error(op, err)
	}
	if n != size {
		return n, fmt.Errorf("%s: the service sent %s bytes for an object it lists at %d: stopped", op, sent(n, size), size)
	}
	return n, nil
}

// sent says how many bytes came: more than the size, once past it.
func sent(n, size int64) string {
	if n > size {
		return "more than " + strconv.FormatInt(size, 10)
	}
	return strconv.FormatInt(n, 10)
}

// Newest is the newest backup under prefix (ending with "/" or empty) whose time is not
// after now, with its listed size; its name is "" when there is none.
func (s *S3Source) Newest(ctx context.Context, prefix string, now time.Time) (name string, size int64, err error) {
	list, err := s.listBackups(ctx, prefix)
	for i := len(list) - 1; i >= 0 && err == nil; i-- {
		if !list[i].At.After(now) {
			return list[i].Name, list[i].Size, nil
		}
	}
	return "", 0, err
}

// Backups lists the backups directly under prefix (which ends with "/" or is empty),
// oldest first by the time the service recorded for each (its Last-Modified: the upload
// of a verified backup), never by the time a name says; other objects there are none of
// its business.
func (s *S3Source) Backups(ctx context.Context, prefix string) ([]Backup, error) {
	list, err := s.listBackups(ctx, prefix)
	out := make([]Backup, len(list))
	for i, o := range list {
		out[i] = o.Backup
	}
	return out, err
}

// s3Backup is a backup listed in S3, with the size the listing gives.
type s3Backup struct {
	Backup
	Size int64
}

func (s *S3Source) listBackups(ctx context.Context, prefix string) ([]s3Backup, error) {
	var list []s3Backup
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix}) {
		if obj.Err != nil {
			return nil, s.s3Error(fmt.Sprintf("list %s/%s", s.where, prefix), obj.Err)
		}
		if name := strings.TrimPrefix(obj.Key, prefix); isBackupName(name) {
			list = append(list, s3Backup{Backup{name, obj.LastModified}, obj.Size})
		}
	}
	slices.SortFunc(list, func(a, b s3Backup) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return list, nil
}

// Remove deletes the object key.
func (s *S3Source) Remove(ctx context.Context, key string) error {
	if err := s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}); err != nil {
		return s.s3Error(fmt.Sprintf("remove %s/%s", s.where, key), err)
	}
	return nil
}
