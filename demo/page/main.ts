import './styles.css';
import { html } from 'htm/preact';
import { render } from 'preact';
import { App } from './app.ts';

/** The reference app's entry point, bundled by demo/serve.ts. */
render(html`<${App} />`, document.getElementById('root')!);
