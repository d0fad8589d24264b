import { createRoot } from 'react-dom/client';
import { App } from './App';
import { startPrefetch } from './prefetch';
import './styles.css';

startPrefetch(location.pathname);
createRoot(document.getElementById('root')!).render(<App />);
