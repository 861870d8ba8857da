// The sori console: log in with client_id/secret, upload with progress, a live job list, and a transcript view
// (speaker colors, timestamps, click a word to hear it, export). Served by sori at `/`; see docs/extras.md.
import { render } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import * as api from "./api.js";
import "./style.css";

const SESSION_KEY = "sori.session";
const POLL_MS = 5000;
const SPEAKER_COLORS = ["#2563eb", "#db2777", "#059669", "#d97706", "#7c3aed", "#0891b2", "#dc2626", "#4d7c0f"];

function loadSession(): api.Session | null {
  try {
    const s = JSON.parse(sessionStorage.getItem(SESSION_KEY) ?? "null") as api.Session | null;
    return s && s.expireAt > Date.now() / 1000 + 60 ? s : null;
  } catch {
    return null;
  }
}

const clock = (ms: number): string => {
  const s = Math.floor(ms / 1000);
  return `${String(Math.floor(s / 60)).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}`;
};

function App() {
  const [session, setSession] = useState<api.Session | null>(loadSession);
  const logout = useCallback(() => {
    sessionStorage.removeItem(SESSION_KEY);
    setSession(null);
  }, []);
  if (!session) {
    return (
      <Login
        onLogin={(s) => {
          sessionStorage.setItem(SESSION_KEY, JSON.stringify(s));
          setSession(s);
        }}
      />
    );
  }
  return <Console session={session} onLogout={logout} />;
}

function Login({ onLogin }: { onLogin: (s: api.Session) => void }) {
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    setBusy(true);
    setError("");
    try {
      onLogin(await api.login(String(form.get("client_id")), String(form.get("client_secret"))));
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="login">
      <h1>sori</h1>
      <p class="muted">Batch speech-to-text console</p>
      <form onSubmit={submit}>
        <label>
          Client ID
          <input name="client_id" autocomplete="username" required />
        </label>
        <label>
          Client secret
          <input name="client_secret" type="password" autocomplete="current-password" required />
        </label>
        <button type="submit" disabled={busy}>
          Log in
        </button>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}

function Console({ session, onLogout }: { session: api.Session; onLogout: () => void }) {
  const [jobs, setJobs] = useState<api.ListItem[]>([]);
  const [selected, setSelected] = useState<string | null>(null);
  const [error, setError] = useState("");
  // Audio stays in this browser only: the server deletes it once the job is final.
  const audio = useRef(new Map<string, string>());

  const handle = useCallback(
    (err: unknown) => {
      if (err instanceof api.ApiError && err.status === 401) onLogout();
      else setError((err as Error).message);
    },
    [onLogout],
  );
  const refresh = useCallback(() => api.listJobs(session).then(setJobs, handle), [session, handle]);
  useEffect(() => {
    void refresh();
    const t = setInterval(refresh, POLL_MS);
    return () => clearInterval(t);
  }, [refresh]);

  return (
    <div class="console">
      <header>
        <h1>sori</h1>
        <span class="muted">{session.clientId}</span>
        <button class="link" onClick={onLogout}>
          Log out
        </button>
      </header>
      {error && (
        <p class="error" role="alert" onClick={() => setError("")}>
          {error}
        </p>
      )}
      <div class="columns">
        <aside>
          <Upload
            session={session}
            onSubmitted={(id, file) => {
              audio.current.set(id, URL.createObjectURL(file));
              setSelected(id);
              void refresh();
            }}
            onError={handle}
          />
          <h2>Jobs</h2>
          <ul class="jobs">
            {jobs.map((j) => (
              <li
                key={j.id}
                class={j.id === selected ? "selected" : ""}
                onClick={() => setSelected(j.id)}
                data-job={j.id}
              >
                <span class={`status ${j.status}`}>{j.status}</span>
                <span class="id">{j.id.slice(0, 10)}</span>
                <span class="muted">{new Date(j.created_at).toLocaleTimeString()}</span>
              </li>
            ))}
            {jobs.length === 0 && <li class="muted">No jobs yet.</li>}
          </ul>
        </aside>
        <section>
          {selected ? (
            <Transcript
              key={selected}
              session={session}
              id={selected}
              audioUrl={audio.current.get(selected)}
              onError={handle}
              onFinal={refresh}
              onDeleted={() => {
                setSelected(null);
                void refresh();
              }}
            />
          ) : (
            <p class="muted">Upload a file or pick a job.</p>
          )}
        </section>
      </div>
    </div>
  );
}

function Upload(props: {
  session: api.Session;
  onSubmitted: (id: string, file: File) => void;
  onError: (e: unknown) => void;
}) {
  const [progress, setProgress] = useState<number | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    const file = data.get("file");
    if (!(file instanceof File) || !file.name) return;
    const model = String(data.get("model"));
    const language = String(data.get("language"));
    const config = {
      model_name: model,
      language: model === "sommers" && (language === "detect" || language === "multi") ? "ko" : language,
      use_diarization: data.get("diarization") === "on",
      use_word_timestamp: true,
    };
    setProgress(0);
    try {
      const id = await api.submit(props.session, file, config, setProgress);
      form.reset();
      props.onSubmitted(id, file);
    } catch (err) {
      props.onError(err);
    } finally {
      setProgress(null);
    }
  };
  return (
    <form class="upload" onSubmit={submit}>
      <h2>New transcription</h2>
      <input type="file" name="file" accept=".wav,.mp3,.m4a,.mp4,.flac,.amr,audio/*" required />
      <div class="row">
        <select name="model" aria-label="model">
          <option value="whisper">whisper</option>
          <option value="sommers">sommers</option>
        </select>
        <select name="language" aria-label="language">
          <option value="detect">detect</option>
          <option value="ko">ko</option>
          <option value="ja">ja</option>
          <option value="multi">multi</option>
        </select>
      </div>
      <label class="check">
        <input type="checkbox" name="diarization" /> Speaker diarization
      </label>
      <button type="submit" disabled={progress !== null}>
        Upload
      </button>
      {progress !== null && <progress value={progress} max={1} aria-label="upload progress" />}
    </form>
  );
}

function Transcript(props: {
  session: api.Session;
  id: string;
  audioUrl: string | undefined;
  onError: (e: unknown) => void;
  onFinal: () => void;
  onDeleted: () => void;
}) {
  const { session, id, onError, onFinal } = props;
  const [job, setJob] = useState<api.Job | null>(null);
  const [now, setNow] = useState(0);
  const player = useRef<HTMLAudioElement>(null);

  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let live = true;
    let polled = false;
    const poll = () =>
      api.readJob(session, id).then((j) => {
        if (!live) return;
        setJob(j);
        if (j.status === "transcribing") timer = setTimeout(poll, POLL_MS);
        else if (polled) onFinal(); // it just finished: show that in the job list now, not at its next poll
        polled = true;
      }, onError);
    void poll();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [session, id, onError, onFinal]);

  const seek = (ms: number) => {
    const a = player.current;
    if (!a) return;
    a.currentTime = ms / 1000;
    void a.play().catch(() => {});
  };
  const download = async (format: "srt" | "vtt" | "txt") => {
    try {
      const blob = await api.exportJob(session, id, format);
      const a = document.createElement("a");
      a.href = URL.createObjectURL(blob);
      a.download = `${id}.${format}`;
      a.click();
      URL.revokeObjectURL(a.href);
    } catch (err) {
      onError(err);
    }
  };

  if (!job) return <p class="muted">Loading…</p>;
  return (
    <div class="transcript">
      <div class="toolbar">
        <h2>{id}</h2>
        <span class={`status ${job.status}`}>{job.status}</span>
        {job.status === "completed" &&
          (["srt", "vtt", "txt"] as const).map((f) => (
            <button key={f} onClick={() => download(f)}>
              {f.toUpperCase()}
            </button>
          ))}
        <button class="danger" onClick={() => api.deleteJob(session, id).then(props.onDeleted, onError)}>
          Delete
        </button>
      </div>
      {props.audioUrl ? (
        <audio
          ref={player}
          src={props.audioUrl}
          controls
          preload="auto"
          onTimeUpdate={(e) => setNow((e.currentTarget as HTMLAudioElement).currentTime * 1000)}
        />
      ) : (
        <p class="muted">
          Playback is available for files uploaded in this browser session (sori deletes audio once a job is final).
        </p>
      )}
      {job.status === "transcribing" && <p class="muted">Transcribing… (checked every 5 s)</p>}
      {job.status === "failed" && (
        <p class="error">
          {job.error?.code}: {job.error?.message}
        </p>
      )}
      {job.status === "completed" && (
        <ol class="utterances">
          {(job.results?.utterances ?? []).map((u, i) => (
            <li key={i} style={{ borderColor: SPEAKER_COLORS[u.spk % SPEAKER_COLORS.length] }}>
              <button class="time link" onClick={() => seek(u.start_at)}>
                {clock(u.start_at)}
              </button>
              <span class="speaker" style={{ background: SPEAKER_COLORS[u.spk % SPEAKER_COLORS.length] }}>
                {u.spk_name ?? `Speaker ${u.spk}`}
              </span>
              <p class="text">
                {u.words && u.words.length > 0
                  ? u.words.map((w, k) => (
                      <span
                        key={k}
                        class={`word${now >= w.start_at && now < w.start_at + w.duration ? " playing" : ""}`}
                        data-start={w.start_at}
                        onClick={() => seek(w.start_at)}
                      >
                        {w.text}{" "}
                      </span>
                    ))
                  : u.msg}
              </p>
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

render(<App />, document.getElementById("app")!);
