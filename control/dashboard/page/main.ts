import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { html } from 'htm/preact';
import { render } from 'preact';
import { DashboardApi } from './api.ts';
import { App } from './app.ts';

/** The dashboard page's entry point, bundled by control/dashboard/bundle.ts. */
render(html`<${App} api=${new DashboardApi()} />`, document.getElementById('root')!);
